"""The file format of checkpoints and exported executables: a NumPy `.npz` archive (no
pickles) of named arrays plus a JSON header in the entry `meta` that names its format.
`write` and `read` are the one writer and the one reader of it; `metagraph.checkpoint` and
`backends.xla.export` say what goes in."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from metagraph.errors import LoadError

HEADER = "meta"


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
        stream = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
        with np.load(stream, allow_pickle=False) as archive:
            header = json.loads(archive[HEADER].tobytes().decode())
            if not isinstance(header, dict):
                raise LoadError(f"{where}: corrupt {what} (its header is a "
                                f"{type(header).__name__}, not an object)")
            if header.get("format") != form:
                raise LoadError(f"{where}: not a {what} of format {form} (found "
                                f"{header.get('format')!r})")
            arrays = {name: archive[name] for name in archive.files if name != HEADER}
    except LoadError:
        raise
    except FileNotFoundError:
        raise LoadError(f"{where}: no such {what}") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError,
            UnicodeDecodeError, EOFError) as error:
        raise LoadError(f"{where}: corrupt {what} ({type(error).__name__}: {error})") from None
    return header, arrays


def entries(header: dict[str, Any], key: str, kind: type, where: str, what: str) -> Any:
    """`header[key]`, which must be a `kind`; LoadError (a crafted or corrupt header) if not."""
    value = header.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LoadError(f"{where}: corrupt {what} (header entry {key!r} is {value!r}, "
                        f"expected a {kind.__name__})")
    return value
