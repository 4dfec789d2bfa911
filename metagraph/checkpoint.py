"""Checkpoints of a graph's state: atomic, versioned, checked on load.

    save("run/ckpt.npz", state, meta={"step": 10})
    state, meta = load("run/ckpt.npz", like=current_state)

The file is a NumPy `.npz` archive without pickles: one array per state leaf and a JSON `meta`
entry holding the format version, every leaf's path, shape and dtype, and the caller's meta.
It is written to a temporary file in the same directory, flushed to disk, then renamed over the
target (`write_atomically`), so a crash during a save leaves the previous checkpoint intact;
the temporary file a killed save leaves behind is removed by the next save or load of the same
target. `load` with `like`
checks that the structure, shapes and dtypes match the state it will replace.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import jax
import numpy as np

from metagraph import archive
from metagraph.errors import LoadError

FORMAT = "metagraph-checkpoint/1"


def _describe(state: Any) -> list[dict[str, Any]]:
    leaves = jax.tree_util.tree_leaves_with_path(state)
    return [{"path": jax.tree_util.keystr(path), "shape": list(np.shape(leaf)),
             "dtype": str(np.asarray(leaf).dtype) if not hasattr(leaf, "dtype")
             else str(leaf.dtype)} for path, leaf in leaves]


def save(path: str | Path, state: Any, meta: dict[str, Any] | None = None) -> Path:
    """Write `state` (any pytree of arrays) and JSON-serialisable `meta` atomically."""
    path = Path(path)
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(state)]
    header = {"format": FORMAT, "leaves": _describe(state), "meta": meta or {}}
    return write_atomically(path, lambda f: archive.write(
        f, header, {f"leaf_{i}": leaf for i, leaf in enumerate(leaves)}))


def write_atomically(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Write the file `path` through `write(binary_file)` so that it is either the old file or
    the new one whole, even if the process dies: into a temporary `.NAME.*.tmp` in the same
    directory, locked while it is written (`flock`), flushed to disk, then renamed over
    `path`. Temporary files of `path` that a killed writer left (unlocked) are removed first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    fcntl.flock(fd, fcntl.LOCK_EX)  # live while locked; the lock dies with the process
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def remove_stale_temporaries(path: Path) -> list[tuple[Path, int]]:
    """Remove the `.NAME.*.tmp` files `write_atomically` leaves when killed mid-write (best
    effort: a read-only directory keeps them), never one a live writer holds locked (another
    process saving into the same directory); returns each removed file and its size."""
    prefix = f".{path.name}."
    removed = []
    with contextlib.suppress(OSError):  # no directory yet
        for stale in path.parent.iterdir():
            if stale.name.startswith(prefix) and stale.name.endswith(".tmp"):
                with contextlib.suppress(OSError), open(stale, "rb") as held:
                    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live writer's: skip
                    size = stale.stat().st_size
                    stale.unlink()
                    removed.append((stale, size))
    return removed


Upgrade = Callable[[list[dict[str, Any]], list[dict[str, Any]], list[np.ndarray]],
                   tuple[list[dict[str, Any]], list[np.ndarray]]]


def load(path: str | Path, like: Any = None,
         upgrade: Upgrade | None = None) -> tuple[Any, dict[str, Any]]:
    """(state, meta). With `like` (the state to be replaced), the checkpoint must have the same
    structure, shapes and dtypes, and comes back in that structure; without it, the state is
    a flat list of leaves. `upgrade(expected, found, leaves) -> (found, leaves)`, where given,
    first brings a checkpoint an earlier version wrote to the state expected (each entry a
    leaf's {"path", "shape", "dtype"}): what it cannot bring is refused as before."""
    path = Path(path)
    remove_stale_temporaries(path)
    header, arrays = archive.read(path, FORMAT, str(path), "checkpoint")
    described_leaves = archive.entries(header, "leaves", list, str(path), "checkpoint")
    try:
        leaves = [arrays[f"leaf_{i}"] for i in range(len(described_leaves))]
        for leaf, described in zip(leaves, described_leaves, strict=True):
            if list(leaf.shape) != described["shape"] or str(leaf.dtype) != described["dtype"]:
                raise LoadError(f"{path}: leaf {described['path']} is {leaf.dtype}"
                                f"{leaf.shape}, its header says {described['dtype']}"
                                f"{described['shape']} (corrupt)")
    except (KeyError, TypeError) as error:
        raise LoadError(f"{path}: corrupt checkpoint (header and arrays disagree: "
                        f"{type(error).__name__}: {error})") from None
    if like is None:
        return leaves, header.get("meta", {})
    expected = _describe(like)
    if upgrade is not None:
        described_leaves, leaves = upgrade(expected, described_leaves, leaves)
    if [d["path"] for d in expected] != [d["path"] for d in described_leaves]:
        missing = {d["path"] for d in expected} - {d["path"] for d in described_leaves}
        extra = {d["path"] for d in described_leaves} - {d["path"] for d in expected}
        raise LoadError(f"{path}: incompatible checkpoint: state entries missing "
                        f"{sorted(missing)[:5]}, unexpected {sorted(extra)[:5]}")
    for want, got in zip(expected, described_leaves, strict=True):
        if want["shape"] != got["shape"] or want["dtype"] != got["dtype"]:
            raise LoadError(f"{path}: incompatible checkpoint: {want['path']} is "
                            f"{got['dtype']}{got['shape']}, the graph expects "
                            f"{want['dtype']}{want['shape']}")
    return jax.tree.unflatten(jax.tree.structure(like), leaves), header.get("meta", {})
