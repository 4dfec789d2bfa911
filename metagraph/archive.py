"""The file format of checkpoints and exported executables: a NumPy `.npz` archive (no
pickles) of named arrays plus a JSON header in the entry `meta` that names its format.
`write` and `read` are the one writer and the one reader of it; `metagraph.checkpoint` and
`backends.xla.export` say what goes in."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from metagraph.errors import LoadError

HEADER = "meta"
MAX_EXPANSION = 64
"""A compressed member may expand to at most this many times the archive's size (the
library writes stored, uncompressed members; a zip bomb expands a thousandfold)."""


def _check_members(stream: Any, where: str, what: str) -> None:
    """Refuse, before any member is read, an archive whose members would expand beyond
    `MAX_EXPANSION` times its size, one by one or all together (a zip bomb, or many members
    each under the bound), or whose stored members claim more bytes than they hold."""
    with zipfile.ZipFile(stream) as zipped:
        infos = zipped.infolist()
        size = sum(info.compress_size for info in infos) + 1
        for info in infos:
            stored = info.compress_type == zipfile.ZIP_STORED
            if (stored and info.file_size > info.compress_size) or \
                    info.file_size > MAX_EXPANSION * size:
                raise LoadError(f"{where}: corrupt {what}: member {info.filename!r} would "
                                f"expand to {info.file_size:,} bytes from "
                                f"{info.compress_size:,} (refused unread)")
        total = sum(info.file_size for info in infos)
        if total > MAX_EXPANSION * size:
            raise LoadError(f"{where}: corrupt {what}: its {len(infos)} members would expand "
                            f"to {total:,} bytes from {size - 1:,} (refused unread)")


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def _open_regular(path: Path, where: str, what: str) -> BinaryIO:
    """`path` opened for reading if it is a regular file; a device (`/dev/zero` reads without
    end), a FIFO (blocks until a writer comes) or a directory is a LoadError, found without
    blocking."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise LoadError(f"{where}: {path} is {kind}, not {_article(what)} {what} file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def write(file: BinaryIO, header: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Write `header` (JSON-serialisable, with a "format" entry) and `arrays` to `file`."""
    np.savez(file, **{HEADER: np.frombuffer(json.dumps(header).encode(), np.uint8)},
             **{name: np.asarray(array) for name, array in arrays.items()})


def read(source: str | Path | bytes, form: str, where: str, what: str
         ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(header, arrays) of an archive of format `form`, read from a path or bytes. Any
    missing, corrupt or foreign file is a LoadError "`where`: ... `what` ..." (e.g. where =
    the path, what = "checkpoint")."""
    try:
        stream = (io.BytesIO(source) if isinstance(source, bytes)
                  else _open_regular(Path(source), where, what))
        with stream:
            _check_members(stream, where, what)
            stream.seek(0)
            header, arrays = _read_opened(stream, form, where, what)
    except LoadError:
        raise
    except FileNotFoundError:
        raise LoadError(f"{where}: no such {what}") from None
    except IsADirectoryError:
        raise LoadError(f"{where}: {source} is a directory, not {_article(what)} {what} "
                        f"file") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError,
            UnicodeDecodeError, EOFError, RecursionError, MemoryError) as error:
        raise LoadError(f"{where}: corrupt {what} ({type(error).__name__}: {error})") from None
    return header, arrays


def _read_opened(stream: BinaryIO, form: str, where: str, what: str
                 ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """`read` of an open archive whose members were checked."""
    with np.load(stream, allow_pickle=False) as archive:
        try:
            header = json.loads(archive[HEADER].tobytes().decode())
        except RecursionError:
            raise LoadError(f"{where}: corrupt {what} (its header nests too deeply to "
                            f"read)") from None
        if not isinstance(header, dict):
            raise LoadError(f"{where}: corrupt {what} (its header is a "
                            f"{type(header).__name__}, not an object)")
        if header.get("format") != form:
            raise LoadError(f"{where}: not a {what} of format {form} (found "
                            f"{header.get('format')!r})")
        arrays = {name: archive[name] for name in archive.files if name != HEADER}
    return header, arrays


def entries(header: dict[str, Any], key: str, kind: type, where: str, what: str) -> Any:
    """`header[key]`, which must be a `kind`; LoadError (a crafted or corrupt header) if not."""
    value = header.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LoadError(f"{where}: corrupt {what} (header entry {key!r} is {value!r}, "
                        f"expected a {kind.__name__})")
    return value
