"""A supervised fastText model file: what its header says (read without loading it), and one loaded copy per
process.

Reading the header lets a recipe fail at validate time, before any work, on the mistakes that cost a run: a
path with no file, a file that is not a fastText model, an unsupervised (word-vector) model, a label the model
does not have. fastText's ``.bin`` and quantized ``.ftz`` share the header: magic number, version, the training
arguments, then the dictionary (words first, labels last), written by ``FastText::saveModel`` in fastText 0.9.
Listing the labels means walking the dictionary: about a second for a model with millions of words, where
loading the model itself would read gigabytes.

The loaded model is shared by every thread of a worker process (the inline executor's worker threads each build
their own operator instances, and a Ray replica is one process): fastText's predict keeps its state per call,
so one copy serves all of them, and a 2 GB model costs 2 GB per process, not per thread. fastText's C++ reads
the whole file into memory; mdf-kernels' ``FastTextModel`` (:func:`load_native`) memory-maps it and reads the
dense matrices in place, so the processes of a machine share the file's pages too.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdf.storage import is_remote

MAGIC = 793712314  # FASTTEXT_FILEFORMAT_MAGIC_INT32
LABEL_PREFIX = "__label__"
_MODELS = {1: "cbow", 2: "skipgram", 3: "supervised"}
_LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
_ARGS = struct.Struct("<12id")  # dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate; t
_DICT = struct.Struct("<3i2q")  # size nwords nlabels ntokens pruneidx_size
_CHUNK = 1 << 22


class ModelFileError(ValueError):
    """The file cannot be used as a supervised fastText classifier; the message says why and the fix."""


@dataclass(frozen=True)
class ModelHeader:
    """What a fastText model file declares: its kind, loss, word n-grams and labels (``__label__`` removed)."""

    path: str
    model: str
    loss: str
    word_ngrams: int
    labels: tuple[str, ...]
    words: int


def read_header(path: str) -> ModelHeader:
    """Read the header and the dictionary's labels of a fastText model; :class:`ModelFileError` on a bad file."""
    if not os.path.isfile(path):
        where = "a folder" if os.path.isdir(path) else "no file"
        raise ModelFileError(f"{path!r} is {where}; give the path of a fastText model file (.bin or .ftz)")
    with open(path, "rb") as f:
        head = f.read(8 + _ARGS.size + _DICT.size)
        magic = struct.unpack_from("<i", head)[0] if len(head) >= 4 else None
        if magic != MAGIC or len(head) < 8 + _ARGS.size + _DICT.size:
            raise ModelFileError(
                f"{path!r} is not a fastText model (no fastText magic number at its start); give a .bin or "
                ".ftz written by fastText's save_model"
            )
        args = _ARGS.unpack_from(head, 8)
        size, nwords, nlabels, _, _ = _DICT.unpack_from(head, 8 + _ARGS.size)
        kind = _MODELS.get(args[7], f"unknown ({args[7]})")
        if kind != "supervised":
            raise ModelFileError(
                f"{path!r} is an unsupervised fastText model ({kind}: word vectors, no labels); give a classifier "
                "trained with fastText's supervised mode (fasttext supervised / train_supervised)"
            )
        if size != nwords + nlabels or nlabels <= 0:
            raise ModelFileError(f"{path!r} has a damaged dictionary ({size} entries, {nlabels} labels)")
        labels = _dictionary_labels(f, size, path)
    return ModelHeader(
        path=path,
        model=kind,
        loss=_LOSSES.get(args[6], str(args[6])),
        word_ngrams=args[5],
        labels=tuple(label.removeprefix(LABEL_PREFIX) for label in labels),
        words=nwords,
    )


def _dictionary_labels(f: Any, size: int, path: str) -> list[str]:
    """Walk ``size`` entries (``word\\0``, int64 count, int8 type) and return the words of type 1 (labels)."""
    buf = f.read(_CHUNK)
    pos = 0
    labels: list[str] = []
    for _ in range(size):
        end = buf.find(b"\0", pos)
        while end < 0 or end + 9 >= len(buf):  # the entry runs past the buffer: read more
            more = f.read(_CHUNK)
            if not more:
                raise ModelFileError(f"{path!r} is cut short inside its dictionary; the file is damaged")
            buf, pos = buf[pos:] + more, 0
            end = buf.find(b"\0", pos)
        if buf[end + 9] == 1:
            labels.append(buf[pos:end].decode("utf-8", "replace"))
        pos = end + 10
    return labels


_HEADERS: dict[tuple[str, int, int], ModelHeader] = {}
_LOADED: dict[tuple[str, int, int], Any] = {}
_NATIVE: dict[tuple[str, int, int], Any] = {}
_LOCK = threading.Lock()


def _key(path: str) -> tuple[str, int, int]:
    st = os.stat(path)
    return os.path.realpath(path), st.st_size, st.st_mtime_ns


def local_model(path: str) -> str:
    """``path`` itself, or for a URL (``s3://``, ``https://``, any protocol :mod:`mdf.storage` reads) a copy in
    this machine's cache (``$MDF_CACHE_DIR/models``, else ``~/.cache/mdf/models``), fetched once per machine.

    A model is memory-mapped (the native engine) or read whole (fastText's binding), both from a local file, so a
    model named by URL is copied first: streamed by ranged requests, written beside its place and renamed, under
    a file lock, so the processes of one machine (inline threads, Ray replicas) fetch it once. The copy is named
    after the URL, size and modification time: a rewritten object is fetched again."""
    if not is_remote(path):
        return path
    from mdf.storage import StorageError, default

    storage = default()
    try:
        info = storage.info(path)
    except StorageError as exc:
        raise ModelFileError(f"cannot read the model {path!r}: {exc}; check the URL and the credentials") from None
    digest = hashlib.sha256(f"{path}\0{info.size}\0{info.mtime_ns}".encode()).hexdigest()[:16]
    folder = Path(os.environ.get("MDF_CACHE_DIR") or Path.home() / ".cache" / "mdf") / "models"
    target = folder / f"{digest}-{os.path.basename(path.rstrip('/')) or 'model'}"
    if target.is_file() and target.stat().st_size == info.size:
        return str(target)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process of this machine may be fetching it: wait for it
        if not (target.is_file() and target.stat().st_size == info.size):
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            try:
                with storage.open_input(path, size=info.size) as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
                if tmp.stat().st_size != info.size:
                    raise ModelFileError(f"{path!r}: fetched {tmp.stat().st_size} of {info.size} bytes")
                os.replace(tmp, target)
            except StorageError as exc:
                raise ModelFileError(f"cannot read the model {path!r}: {exc}") from None
            finally:
                tmp.unlink(missing_ok=True)
    return str(target)


def header(path: str) -> ModelHeader:
    """:func:`read_header`, remembered per file (path, size, modification time) for this process; a URL is read
    from its local copy (:func:`local_model`), errors naming the URL."""
    if is_remote(path):
        local = local_model(path)
        try:
            return header(local)
        except ModelFileError as exc:
            raise ModelFileError(str(exc).replace(repr(local), repr(path))) from None
    if not os.path.isfile(path):
        return read_header(path)  # raises the message for a missing file
    key = _key(path)
    with _LOCK:
        if key not in _HEADERS:
            _HEADERS[key] = read_header(path)
        return _HEADERS[key]


def check_whole(path: str) -> None:
    """The whole model file, past its header: the matrices are there, whole and of the shapes the dictionary needs
    (a file cut short or damaged after its dictionary passed :func:`header` and failed the run at its first
    batch). With mdf-kernels the model is loaded as the run will load it (memory-mapped, kept for this process:
    an inline run then costs nothing more); :class:`ModelFileError` with the kernel's reason. Without them nothing
    more is checked here."""
    try:
        import mdf_kernels
    except ImportError:
        return
    if not hasattr(mdf_kernels, "FastTextModel"):
        return
    try:
        load_native(path)
    except ValueError as exc:
        raise ModelFileError(f"{path!r}: {exc}; the file is damaged or cut short: fetch or copy it again") from None


def load(path: str) -> Any:
    """The model loaded once per process through fastText's C++ binding (``fasttext_pybind``).

    The binding module is the same in ``fasttext-predict`` and in ``fasttext-wheel`` (each wheel installs it; the
    last installed wins), and both have ``loadModel`` and ``predict(text, k, threshold, on_unicode_error)``:
    calling it directly skips the Python wrappers, whose ``load_model`` prints a warning on stderr and whose
    ``predict`` in fasttext-wheel 0.9.2 fails under numpy 2."""
    import fasttext_pybind

    path = local_model(path)
    key = _key(path)
    with _LOCK:
        model = _LOADED.get(key)
        if model is None:
            model = fasttext_pybind.fasttext()
            model.loadModel(path)
            _LOADED[key] = model
        return model


def load_native(path: str) -> Any:
    """The model loaded once per process by mdf-kernels (``mdf_kernels.FastTextModel``: Rust, memory-mapped,
    predict without the GIL), shared by every thread like :func:`load`'s."""
    import mdf_kernels

    path = local_model(path)
    key = _key(path)
    with _LOCK:
        model = _NATIVE.get(key)
        if model is None:
            model = mdf_kernels.FastTextModel(path)
            _NATIVE[key] = model
        return model
