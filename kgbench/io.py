"""Files kgbench writes and reads: the one owner of atomic writes, canonical JSON and sha256.

The compiler and the harness both write files that are compared byte for byte (compiled
artifacts, scenario sets, releases, run folders) and both name files by their sha256, so
there is exactly one spelling of each, here, in a module that imports neither of them:

- Every write goes to a temporary sibling, is flushed to disk and renamed over the target
  (and the folder is fsynced), so a reader or a restarted run sees the old content or the
  new, never half of it. A folder is replaced the same way (`replace_folder`).
- Canonical JSON has sorted keys and UTF-8 text; the pretty form (manifests, schemas, run
  descriptions) has a two-space indent and one trailing newline; a JSON Lines record is one
  sorted line; the compact form (`canonical_json`) is what request keys hash.
- Text is encoded with `utf8_bytes`, which never raises: a model can send a lone surrogate
  that UTF-8 cannot encode, and it becomes a visible escape instead of a crash.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from json.encoder import c_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring as c_encode_basestring
from pathlib import Path
from typing import Any

from kgbench import untrusted
from kgbench.errors import Location, UserError

# --- encoding ----------------------------------------------------------------------------


def utf8_bytes(text: str) -> bytes:
    """UTF-8 bytes of any str, never an exception.

    A lone surrogate (a truncated emoji, `"\\ud83d"`), which a Python str can hold but UTF-8
    cannot encode, becomes the six characters `\\ud83d`. In JSON text a lone surrogate can
    only sit inside a string, where that escape is the standard spelling, so JSON written
    this way reads back as the very same str; in other text it is a visible escape.
    """
    return text.encode("utf-8", errors="backslashreplace")


def dumps(obj: Any, **kwargs: Any) -> str:
    """`json.dumps` keeping UTF-8 text as is (write its result with `utf8_bytes`)."""
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(obj, **kwargs)


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: one spelling per value (what keys hash)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_text(obj: Any) -> str:
    """Pretty canonical JSON: sorted keys, two-space indent, one trailing newline."""
    return dumps(obj, indent=2, sort_keys=True) + "\n"


def json_bytes(obj: Any) -> bytes:
    return utf8_bytes(json_text(obj))


def ordered_json_bytes(obj: Any) -> bytes:
    """Pretty JSON whose key order is already decided (e.g. a response schema in the spec's
    declared order, which strict structured output makes the model follow): no sort_keys."""
    return utf8_bytes(dumps(obj, indent=2) + "\n")


# The compact canonical form of large files: sorted keys, no whitespace, so CPython's C encoder
# runs (an indent disables it); rows are encoded this many at a time.
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
ROWS_PER_CHUNK = 10_000


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _row_encoder() -> Callable[[Any], str]:
    """`_COMPACT.encode`, with the C encoder made once instead of once per row.

    `JSONEncoder.encode` builds a new C encoder on every call, a quarter of the time of
    encoding a small row, and millions of rows are encoded at scale. This one is made with
    the same settings and without the circular-reference check (rows are trees the compiler
    builds), so its text is `_COMPACT.encode`'s; where CPython has no C encoder, it is that.
    """
    if c_make_encoder is None:  # pragma: no cover - CPython always has it
        return _COMPACT.encode
    encode = c_make_encoder(
        None, _not_serializable, c_encode_basestring, None, ":", ",", True, False, True
    )
    return lambda row: "".join(encode(row, 0))


encode_row = _row_encoder()


class RowTexts:
    """Rows already encoded (e.g. column by column, `kgbench.jsoncolumns`): texts of one or
    more compact rows each, joined by `,` newline, given where rows are (`compact_rows_chunks`,
    `compact_json_chunks`) and written as they are."""

    __slots__ = ("texts",)

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = texts


def _rows_chunks(rows: Iterable[Any] | RowTexts) -> Iterator[str]:
    """A JSON array with one compact row per line: `[` newline, rows joined by `,` newline,
    newline `]` (`[]` when empty), so it is both one JSON value and readable line by line."""
    sep = "[\n"
    if isinstance(rows, RowTexts):
        for text in rows.texts:
            if text:
                yield sep + text
                sep = ",\n"
    else:
        it = iter(rows)
        while batch := list(itertools.islice(it, ROWS_PER_CHUNK)):
            yield sep + ",\n".join(map(encode_row, batch))
            sep = ",\n"
    yield "[]" if sep == "[\n" else "\n]"


def compact_rows_chunks(rows: Iterable[Any] | RowTexts) -> Iterator[bytes]:
    """A large rows file (a JSON array of objects) as UTF-8 chunks, one row per line."""
    for text in _rows_chunks(rows):
        yield utf8_bytes(text)
    yield b"\n"


def compact_json_chunks(
    skeleton: Mapping[str, Any], lists: Mapping[str, Callable[[], Iterable[Any] | RowTexts]]
) -> Iterator[bytes]:
    """A large JSON object as UTF-8 chunks: compact, keys sorted, and each key of `lists`
    holding the rows its maker yields, one row per line. Never held whole."""
    marks = {key: f"\x00rows:{key}\x00" for key in lists}
    if set(marks) & set(skeleton):  # pragma: no cover - a caller bug
        raise ValueError("a key is both in the skeleton and in lists")
    text = _COMPACT.encode({**skeleton, **marks})
    for key, mark in sorted(marks.items(), key=lambda km: text.index(_COMPACT.encode(km[1]))):
        head, text = text.split(_COMPACT.encode(mark), 1)
        yield utf8_bytes(head)
        for chunk in _rows_chunks(lists[key]()):
            yield utf8_bytes(chunk)
    yield utf8_bytes(text + "\n")


def record_line(record: Any) -> str:
    """One JSON Lines record with sorted keys: the same record always gives the same line."""
    return dumps(record, sort_keys=True) + "\n"


def jsonl_text(records: Iterable[Any]) -> str:
    return "".join(record_line(r) for r in records)


def jsonl_bytes(records: Iterable[Any]) -> bytes:
    return utf8_bytes(jsonl_text(records))


def json_line_bytes(obj: Any, **kwargs: Any) -> bytes:
    """One JSON Lines record as bytes, in the key order given (safe for any str it holds)."""
    return utf8_bytes(dumps(obj, **kwargs) + "\n")


# --- hashing -----------------------------------------------------------------------------


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes (as `utf8_bytes` writes them)."""
    return sha256_bytes(utf8_bytes(text))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- atomic writes -----------------------------------------------------------------------

# What the disk or the folder, not kgbench, refuses: each is the user's to fix (free space, a
# writable folder, a path that is not a file), so it is one message and exit 2.
DISK_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.EISDIR,
        errno.ENAMETOOLONG,
        errno.EBUSY,
        errno.EACCES,
        errno.EPERM,
        errno.ENOENT,
        errno.EXDEV,
        errno.EFBIG,
        errno.EMLINK,
        errno.ELOOP,
    }
)


class WriteError(UserError):
    """A write the disk refused: names the path and the cause; the previous file is intact
    (every write goes to a temporary sibling first)."""


def write_error(exc: OSError, path: Path | str) -> WriteError:
    """One message for a refused write: the path kgbench was writing, and the cause."""
    cause = exc.strerror or type(exc).__name__
    code = errno.errorcode.get(exc.errno or 0)
    where = exc.filename if exc.filename and str(exc.filename) != str(path) else None
    detail = f" at {where}" if where else ""
    return WriteError(
        f"cannot write {path}: {cause}{f' ({code})' if code else ''}{detail}; "
        "nothing was changed there"
    )


@contextmanager
def disk_errors(path: Path | str) -> Iterator[None]:
    """Turn an OSError the disk raised while writing `path` into a `WriteError`."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in DISK_ERRNOS:
            raise
        raise write_error(exc, path) from None


@contextmanager
def exclusive_lock(path: Path, busy: str) -> Iterator[None]:
    """Hold an flock on `path` (created if missing) while the block runs; when another
    process holds it, a UserError saying `busy`, at once (never a wait behind a job that may
    run for hours). The kernel drops the lock when its holder dies, even by SIGKILL, so a
    killed job never leaves a stale lock. The lock file holds no data."""
    import fcntl

    with disk_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(busy) from None
        yield
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Make a rename durable: fsync the folder that holds the new name (POSIX)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


SECRET_MODE = 0o600
"""The mode of a file that holds a secret (the Neo4j password, anything with a key)."""


def process_umask() -> int:
    """The process umask, read without changing it where the kernel says it (Linux >= 4.7);
    elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def shared_mode() -> int:
    """The mode an ordinary `open()` would give a new file (0o666 less the umask): what
    every output meant to be shared (run folders, reports, releases, exports) is written with."""
    return 0o666 & ~process_umask()


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file, fsync, os.replace, fsync the folder: all or nothing.

    `mode` sets the file's permissions before any byte is written (`SECRET_MODE` for a
    password, so the content is never readable by others, not even for an instant); the
    default is `shared_mode()`, what the umask gives an ordinary file, not mkstemp's 0600.
    """
    path = Path(path)
    with disk_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, shared_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            raise write_error(exc, path) from None
        raise
    fsync_dir(path.parent)


def atomic_write_files(files: Mapping[Path, bytes], mode: int | None = None) -> None:
    """Write several files all or nothing: each goes to a temporary sibling first, and only
    when every one is written and flushed are they renamed over their targets. A refused
    write (no space, a read-only folder) leaves every previous file as it was and no partial
    set behind (an export of 2 of its 5 files looked like an export)."""
    staged: list[tuple[str, Path]] = []
    current: Path | None = None
    try:
        for path, data in files.items():
            current = Path(path)
            current.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                prefix=f".{current.name}.", suffix=".tmp", dir=current.parent
            )
            staged.append((tmp, current))
            if mode is not None:
                os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            raise write_error(exc, current or "") from None
        raise
    for folder in sorted({path.parent for _, path in staged}):
        fsync_dir(folder)


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    atomic_write_bytes(path, utf8_bytes(text), mode)


def atomic_write_json(path: Path, obj: Any) -> None:
    """Pretty, key-sorted JSON with a trailing newline (deterministic bytes)."""
    atomic_write_bytes(path, json_bytes(obj))


def _remove_strays(target: Path) -> None:
    """Remove the temporary and swapped-out siblings of `target` that a killed replace left
    behind (`.<name>.tmp-<pid>-*`, `.<name>.old-<pid>`): only those whose process is gone, so
    a replace running beside this one keeps its own."""
    for stray in target.parent.glob(f".{target.name}.*-*"):
        kind, _, rest = stray.name[len(target.name) + 2 :].partition("-")
        pid = rest.split("-", 1)[0]
        if kind not in ("tmp", "old") or not pid.isdigit() or _alive(int(pid)):
            continue
        if kind == "old" and not target.exists() and not target.is_symlink():
            # killed between swapping the old folder out and the new one in: the old folder
            # is the only copy of the data, so it is put back, never removed
            os.replace(stray, target)
            continue
        if stray.is_symlink() or not stray.is_dir():
            stray.unlink(missing_ok=True)
        else:
            shutil.rmtree(stray, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


# A file written in chunks (a large output) is flushed to disk and its written pages dropped
# from the page cache every this many bytes (`_write_streamed`).
DROP_BEHIND_BYTES = 32 << 20


def _write_streamed(path: Path, chunks: Iterable[bytes]) -> None:
    """Write `chunks` to a new file at `path`, flushing it to disk and dropping the pages
    written so far from the page cache every `DROP_BEHIND_BYTES` (as `dd oflag=nocache`).

    Why: filling a page-cache page the kernel has not used lately is what a large write costs,
    not the copy: on the 2-core development VM 1 GB written in 2 MB chunks took 8.6-10 s of
    system time, and 0.5 s flushed and dropped every 32 MB, the freed pages being reused at
    once; a 4,000,000-assertion compile writes 7.48 GB. It also keeps a multi-gigabyte compile
    from evicting everything else's cache, and leaves the file on disk, as the module promises.
    The bytes are the same; without `posix_fadvise` (not Linux) the file is written plainly."""
    fadvise = getattr(os, "posix_fadvise", None)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        dropped = pending = 0
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                written = os.write(fd, view)
                view = view[written:]
                pending += written
            if fadvise is not None and pending >= DROP_BEHIND_BYTES:
                os.fdatasync(fd)
                fadvise(fd, dropped, pending, os.POSIX_FADV_DONTNEED)
                dropped += pending
                pending = 0
    finally:
        os.close(fd)


def replace_folder(
    target: Path,
    files: Mapping[str, bytes] | Iterable[tuple[str, bytes | Iterable[bytes]]],
    keep: Iterable[str] = (),
) -> None:
    """Replace `target` with exactly `files` (relative path -> bytes, or an iterable of byte
    chunks written as they come, for a file too large to hold), all or nothing.

    Everything is written into a sibling temporary folder first; only when every file is in
    place is the old folder swapped out by rename. A failure at any point leaves the previous
    folder untouched and removes the half-written one. `keep` names subfolders of the old
    folder that other commands own (e.g. published gold releases), carried over as they are.
    """
    target = Path(target)
    if target.is_symlink():  # write through the link: swap the folder it points at
        target = target.resolve()
    with disk_errors(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_strays(target)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
        os.chmod(tmp, 0o777 & ~process_umask())  # the folder others read, not mkdtemp's 0700
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    items = files.items() if isinstance(files, Mapping) else files
    try:
        for rel, data in items:
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                _write_streamed(path, data)
        for name in keep:
            src = target / name
            if src.exists():
                shutil.copytree(src, tmp / name, symlinks=True)
        if target.exists():
            os.replace(target, old)
        os.replace(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not target.exists():
            os.replace(old, target)
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            raise write_error(exc, target) from None
        raise
    shutil.rmtree(old, ignore_errors=True)
    fsync_dir(target.parent)


# --- reading -----------------------------------------------------------------------------


def iter_jsonl(
    path: Path, what: str = "JSON", printable: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a bad line is a UserError naming it
    (read by the kernel's reader of untrusted text, `kgbench.untrusted`). `printable`: a
    string holding a control character (NUL, ESC; tab and line breaks allowed) is refused,
    as in hand-written files (scenarios) the domain tables refuse them too."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"file not found: {path}")
    for n, item in untrusted.iter_jsonl(path, what):
        where = untrusted.control_character_at(item) if printable else None
        if where is not None:
            raise UserError(
                "a control character in the text; expected printable text (tab and line "
                "breaks allowed)",
                Location(str(path), n, where),
            )
        yield n, item


def read_jsonl(path: Path, what: str = "JSON") -> list[dict[str, Any]]:
    return [item for _, item in iter_jsonl(path, what)]


def read_json_object(path: Path, what: str = "JSON object") -> dict[str, Any]:
    """The JSON object in `path`; missing, malformed or not an object is a UserError."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"file not found: {path}")
    return untrusted.load_json_object(path, what)
