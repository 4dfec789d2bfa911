"""Serialized executables: a root API plus its state, runnable without the component classes.

The file is a NumPy `.npz` archive: `exported` (the `jax.export` serialization of
`(state, *inputs) -> (state', outputs)`, batch and time symbolic), `meta` (JSON: format
version, API name, input names and spaces, and the SHA-256 `digest` of the payload) and the
state leaves. `load` recomputes the digest before jaxlib sees a byte: a file changed after
export (even with its zip checksums recomputed) is a `LoadError`, not a crash in jaxlib.

An exported file is a program: the digest detects damage and tampering by someone who cannot
also rewrite the digest, not a forger; load only files you would run as code.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax import export

from metagraph import archive, runtime_checks
from metagraph.errors import LoadError, SpaceError
from metagraph.graph import MetaGraph, State
from metagraph.spaces import BATCH, TIME

FORMAT = "metagraph-exported/2"  # /2: with the payload's digest


def payload_digest(arrays: dict[str, np.ndarray]) -> str:
    """The SHA-256 (hex) of the payload: every array's name, dtype, shape and bytes, in name
    order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def export_api(graph: MetaGraph, api: str, state: State,
               platforms: tuple[str, ...] | None = None) -> bytes:
    """Serialise root API `api` of `graph` with `state` (jax.export) into bytes that `load`
    reads back.

    Args:
        graph: The built graph.
        api: The root API to export.
        state: The state the loaded API starts from.
        platforms: The platforms to lower for (default: the current one).

    Returns:
        The serialised API, its input spaces and its state.
    """
    sig = graph.apis[api]
    batch = BATCH if graph.batch_size is None else graph.batch_size
    time = TIME if graph.time_size is None else graph.time_size
    inputs = [space.to_abstract(batch, time) for space in sig.inputs.values()]
    pure = runtime_checks.reporting(graph.pure(api))
    exported = export.export(jax.jit(pure), platforms=platforms)(
        graph.state_spec, *inputs)
    leaves = jax.tree.leaves(state)
    arrays = {"exported": np.frombuffer(exported.serialize(), np.uint8),
              **{f"state_{i}": np.asarray(leaf) for i, leaf in enumerate(leaves)}}
    meta = {"format": FORMAT, "api": api, "root": graph.root.name,
            "inputs": {name: str(space) for name, space in sig.inputs.items()},
            "outputs": str(sig.outputs), "num_state_leaves": len(leaves),
            "digest": payload_digest(arrays)}
    buffer = io.BytesIO()
    archive.write(buffer, meta, arrays)
    return buffer.getvalue()


class LoadedApi:
    """A deserialized root API: call it with the inputs; it threads its own state (each
    exported API is a program of its own, carrying the state it was exported with)."""

    def __init__(self, exported: export.Exported, state: State, meta: dict):
        self.exported, self.state, self.meta = exported, state, meta
        self.name = meta["api"]
        self.input_names = list(meta["inputs"])
        state_leaves = exported.in_tree.children()[0].children()[0].num_leaves
        self._dtypes = [aval.dtype for aval in exported.in_avals[state_leaves:]]

    def __call__(self, *inputs: Any) -> Any:
        """Run the API on `inputs` (as many as it has, each of its input's dtype: no silent
        casts, as with an executor); returns its outputs and keeps the new state."""
        if len(inputs) != len(self.input_names):
            raise TypeError(f"{self.meta['root']}.{self.name} takes inputs "
                            f"{self.meta['inputs']}, got {len(inputs)} values")
        leaves = jax.tree.leaves(inputs)
        for i, (leaf, dtype) in enumerate(zip(leaves, self._dtypes, strict=False)):
            got = np.result_type(leaf)
            if got != dtype and not isinstance(leaf, int | float):  # Python numbers: weak
                name = self.input_names[i] if len(leaves) == len(self.input_names) else i
                where = f"{self.meta['root']}.{self.name}"
                raise SpaceError(f"{where}: input {name!r} must be {np.dtype(dtype).name}, got "
                                 f"{got.name} (cast it: np.asarray(x, np.{np.dtype(dtype).name}))",
                                 component=self.meta["root"], api=self.name, argument=str(name))
        self.state, outputs = self.exported.call(self.state, *inputs)
        return outputs

    def __repr__(self) -> str:
        args = ", ".join(f"{k}: {v}" for k, v in self.meta["inputs"].items())
        return f"LoadedApi({self.meta['root']}.{self.name}({args}) -> {self.meta['outputs']})"


def load(source: str | Path | bytes) -> LoadedApi:
    """Load what `XlaExecutor.export` wrote. Raises `LoadError` for a corrupt or foreign file."""
    where, what = "backends.xla.load", "exported executable"
    meta, arrays = archive.read(source, FORMAT, where, what)
    count = archive.entries(meta, "num_state_leaves", int, where, what)
    for key in ("api", "root", "outputs"):
        archive.entries(meta, key, str, where, what)
    archive.entries(meta, "inputs", dict, where, what)
    digest = archive.entries(meta, "digest", str, where, what)
    if payload_digest(arrays) != digest:
        raise LoadError(f"{where}: corrupt {what}: its payload does not match the SHA-256 "
                        f"digest written at export (changed or damaged after export)")
    try:
        leaves = [arrays[f"state_{i}"] for i in range(count)]
        exported = export.deserialize(bytearray(arrays["exported"].tobytes()))
    except KeyError as error:
        raise LoadError(f"{where}: corrupt {what} (no array {error})") from None
    except Exception as error:  # flatbuffers raise assorted errors on garbage
        raise LoadError(f"{where}: corrupt {what} ({type(error).__name__}: {error})") from None
    state_tree = exported.in_tree.children()[0].children()[0]
    if state_tree.num_leaves != len(leaves):
        raise LoadError(f"backends.xla.load: the state has {len(leaves)} arrays, the "
                        f"executable expects {state_tree.num_leaves}")
    return LoadedApi(exported, jax.tree.unflatten(state_tree, leaves), meta)
