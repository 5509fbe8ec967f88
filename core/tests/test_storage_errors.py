"""Storage errors cross process boundaries as themselves: a Ray actor that fails to read an object must give the
driver one line naming the URL. Fails without ``StorageError.__reduce__``: seen (``TypeError: __init__() missing
1 required positional argument: 'message'`` on unpickling; a real Ray run printed ``UnserializableException``)."""

from __future__ import annotations

import pickle

import pytest

from mdf.storage.errors import LockHeld, ObjectNotFound, StorageError


@pytest.mark.parametrize("cls", [StorageError, ObjectNotFound, LockHeld])
def test_storage_errors_pickle_as_themselves(cls: type[StorageError]) -> None:
    err = cls("s3://bucket/key.parquet", "no such object")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and str(back) == str(err) and back.url == err.url
    assert back.exit_code == err.exit_code
