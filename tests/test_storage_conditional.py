"""mdf.storage's conditional operations (read_versioned, write_if, delete_if, create_exclusive), each on a local
folder and on a real SeaweedFS: a condition that no longer holds is refused, and of racing writers exactly one
wins. The output lock and the dedup index's manifest and lock are built on these four."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mdf.storage import (
    PreconditionFailed,
    S3Settings,
    Storage,
    StorageSettings,
    create_exclusive,
    delete_if,
    read_versioned,
    write_if,
)

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]


@pytest.fixture(params=["local", "s3"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, str]:
    """``(storage, folder URL)``: a local folder, or a fresh bucket on the session's SeaweedFS."""
    if request.param == "local":
        return Storage(), str(tmp_path / "objects")
    seaweed: SeaweedS3 = request.getfixturevalue("seaweed")
    bucket = request.getfixturevalue("bucket")
    ep = seaweed.endpoint
    assert ep is not None
    s3 = S3Settings(endpoint_url=ep.url, access_key_id=ep.access_key, secret_access_key=ep.secret_key)
    return Storage(StorageSettings(s3=s3)), f"s3://{bucket}/objects"


def test_read_versioned_sees_each_write_as_a_new_version(where: tuple[Storage, str]) -> None:
    storage, root = where
    url = f"{root}/manifest.json"
    assert _data(storage, url) is None
    first = create_exclusive(storage, url, b"one")
    got = read_versioned(storage, url)
    assert got is not None and got.data == b"one" and got.version == first and -5 < got.age_s < 60
    second = write_if(storage, url, b"two", first)
    assert second != first
    again = read_versioned(storage, url)
    assert again is not None and (again.data, again.version) == (b"two", second)


def test_write_if_with_a_stale_version_is_refused(where: tuple[Storage, str]) -> None:
    """Seen red with ``IfMatch`` left out of ``write_if``'s PUT (SeaweedFS took the stale write)."""
    storage, root = where
    url = f"{root}/manifest.json"
    old = create_exclusive(storage, url, b"old")
    write_if(storage, url, b"new", old)
    with pytest.raises(PreconditionFailed) as err:
        write_if(storage, url, b"stale", old)
    assert str(err.value).startswith(url) and "\n" not in str(err.value)
    assert _data(storage, url) == b"new"


def test_write_if_on_a_deleted_object_is_refused(where: tuple[Storage, str]) -> None:
    storage, root = where
    url = f"{root}/lock"
    version = create_exclusive(storage, url, b"held")
    delete_if(storage, url, version)
    assert _data(storage, url) is None
    with pytest.raises(PreconditionFailed):
        write_if(storage, url, b"renewed", version)
    assert _data(storage, url) is None


def test_create_exclusive_on_an_existing_key_is_refused(where: tuple[Storage, str]) -> None:
    storage, root = where
    url = f"{root}/lock"
    create_exclusive(storage, url, b"first")
    with pytest.raises(PreconditionFailed):
        create_exclusive(storage, url, b"second")
    assert _data(storage, url) == b"first"


def test_delete_if_with_a_stale_version_is_refused(where: tuple[Storage, str]) -> None:
    """A lock released by a run that lost it must not delete the new holder's lock."""
    storage, root = where
    url = f"{root}/lock"
    old = create_exclusive(storage, url, b"ours")
    write_if(storage, url, b"taken over", old)
    with pytest.raises(PreconditionFailed):
        delete_if(storage, url, old)
    got = read_versioned(storage, url)
    assert got is not None and got.data == b"taken over"
    delete_if(storage, url, got.version)
    assert _data(storage, url) is None


def _data(storage: Storage, url: str) -> bytes | None:
    got = read_versioned(storage, url)
    return None if got is None else got.data


def _race(n: int, attempt: Callable[[int], None]) -> list[int]:
    """Run ``attempt(i)`` on ``n`` threads released together; the indices that did not raise PreconditionFailed."""
    start = threading.Barrier(n)
    won: list[int] = []
    errors: list[BaseException] = []

    def one(i: int) -> None:
        start.wait()
        try:
            attempt(i)
            won.append(i)
        except PreconditionFailed:
            pass
        except BaseException as exc:  # anything else fails the test below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return won


@pytest.mark.parametrize("rounds", [5])
def test_of_racing_writers_exactly_one_wins(where: tuple[Storage, str], rounds: int) -> None:
    """Eight writers replace the same version at once (a manifest read by eight runs), then eight create the same
    key: each time exactly one wins and the object holds its bytes. Seen red locally without the folder's flock
    around compare-and-rename (2 of 8 won a round), and on SeaweedFS with ``IfMatch`` left out (8 of 8 won)."""
    storage, root = where
    for r in range(rounds):
        url = f"{root}/race-{r}"
        base = create_exclusive(storage, url, b"base")
        won = _race(8, lambda i, url=url, base=base: write_if(storage, url, f"w{i}".encode(), base))
        assert len(won) == 1, won
        assert _data(storage, url) == f"w{won[0]}".encode()
        fresh = f"{root}/create-{r}"
        won = _race(8, lambda i, fresh=fresh: create_exclusive(storage, fresh, f"c{i}".encode()))
        assert len(won) == 1, won
        assert _data(storage, fresh) == f"c{won[0]}".encode()
