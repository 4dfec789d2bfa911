"""Serialized executables: a root API plus its state, runnable without the component classes.

The file is a NumPy `.npz` archive: `exported` (the `jax.export` serialization of
`(state, *inputs) -> (state', outputs)`, batch and time symbolic), `meta` (JSON: format
version, API name, input names and spaces, and the SHA-256 `digest` of the payload and the
rest of the header) and the state leaves: only those the API needs (`state_reads.py`), as
nested plain dicts (`{scope: {name: ...}}`), so no pytree node type of the library's or
optax's has to be known to load it. `load` recomputes the digest before jaxlib sees a byte,
and checks each state array against the program's own input types: a file changed after
export (even with its zip checksums recomputed) is a `LoadError`, not a crash in jaxlib.

An exported file is a program: the digest detects damage and tampering by someone who cannot
also rewrite the digest, not a forger; load only files you would run as code.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from backends.xla.state_reads import needed_leaves
from metagraph import archive, runtime_checks
from metagraph.errors import LoadError, SpaceError
from metagraph.graph import MetaGraph, State
from metagraph.spaces import BATCH, TIME, space_of

FORMAT = "metagraph-exported/3"  # /3: only the state the API needs; the header in the digest


def payload_digest(arrays: dict[str, np.ndarray], header: dict[str, Any] | None = None) -> str:
    """The SHA-256 (hex) of the payload: every array's name, dtype, shape and bytes, in name
    order, then the header (without its `digest` entry) as canonical JSON."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.tobytes())
    described = {key: value for key, value in (header or {}).items() if key != "digest"}
    digest.update(json.dumps(described, sort_keys=True).encode())
    return digest.hexdigest()


def _key_name(key: Any) -> str:
    """One step of a pytree path as a plain dict key: a dict's key, a sequence's index, a
    named tuple's field."""
    for attr in ("key", "idx", "name"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def _nested(paths: list[tuple[str, ...]], leaves: list[Any]) -> dict[str, Any]:
    """Nested plain dicts holding `leaves` at `paths`."""
    tree: dict[str, Any] = {}
    for path, leaf in zip(paths, leaves, strict=True):
        node = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = leaf
    return tree


def _at(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


class NeededState(NamedTuple):
    """Root API `api` as a pure `program(needed, *inputs) -> (needed', outputs)` over only the
    state leaves it needs, `select(state)` picking those leaves out of a whole state, and the
    inputs' abstract values it was traced with."""

    program: Callable[..., tuple[Any, Any]]
    select: Callable[[State], dict[str, Any]]
    inputs: list[Any]


def needed_state(graph: MetaGraph, api: str, inputs: list[Any] | None = None) -> NeededState:
    """Root API `api` of `graph` over only the state leaves it needs
    (`state_reads.needed_leaves`), as nested plain dicts (scope, name, then the keys and
    fields inside: any pytree node type, optax's included, becomes dicts). `inputs`: the
    inputs' abstract values, when not those of the API's spaces (shapes may be symbolic)."""
    sig = graph.apis[api]
    if inputs is None:
        batch = BATCH if graph.batch_size is None else graph.batch_size
        time = TIME if graph.time_size is None else graph.time_size
        inputs = [space.to_abstract(batch, time) for space in sig.inputs.values()]
    pure = runtime_checks.reporting(graph.pure(api))
    spec = graph.state_spec
    treedef = jax.tree.structure(spec)
    flat = jax.tree_util.tree_flatten_with_path(spec)[0]
    paths = [tuple(_key_name(key) for key in path) for path, _ in flat]
    needed = needed_leaves(pure, spec, *inputs)
    kept = [path for path, need in zip(paths, needed, strict=True) if need]

    def program(kept_state: dict[str, Any], *args: Any) -> tuple[Any, Any]:
        leaves = [_at(kept_state, path) if need else jnp.zeros(abstract.shape, abstract.dtype)
                  for path, need, (_, abstract) in zip(paths, needed, flat, strict=True)]
        new_state, outputs = pure(jax.tree.unflatten(treedef, leaves), *args)
        return select(new_state), outputs

    def select(state: State) -> dict[str, Any]:
        values = jax.tree.leaves(state)
        return _nested(kept, [v for v, need in zip(values, needed, strict=True) if need])

    program.__name__ = f"{graph.root.name}_{api}"
    return NeededState(program, select, inputs)


def export_api(graph: MetaGraph, api: str, state: State,
               platforms: tuple[str, ...] | None = None, inputs: list[Any] | None = None,
               extra: dict[str, Any] | None = None) -> bytes:
    """Serialise root API `api` of `graph` with the part of `state` it needs (jax.export)
    into bytes that `load` reads back: the state its outputs depend on, now or in later calls,
    and nothing else (an acting API carries its policy, not the optimizer's moments, a replay
    buffer or a target network).

    Args:
        graph: The built graph.
        api: The root API to export.
        state: The state the loaded API starts from.
        platforms: The platforms to lower for (default: the current one).
        inputs: The inputs' abstract values (`jax.ShapeDtypeStruct`, shapes may be
            symbolic), when not those of the API's spaces.
        extra: JSON-serialisable entries for the header (`LoadedApi.meta`), covered by the
            digest.

    Returns:
        The serialised API, its input spaces and its state.
    """
    sig = graph.apis[api]
    program, select, inputs = needed_state(graph, api, inputs)
    kept = select(state)
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), x.dtype), kept)
    exported = export.export(jax.jit(program), platforms=platforms)(abstract, *inputs)
    leaves = jax.tree.leaves(kept)
    arrays = {"exported": np.frombuffer(exported.serialize(), np.uint8),
              **{f"state_{i}": np.asarray(leaf) for i, leaf in enumerate(leaves)}}
    meta = {**(extra or {}), "format": FORMAT, "api": api, "root": graph.root.name,
            "inputs": {name: str(space_of(value))
                       for name, value in zip(sig.inputs, inputs, strict=True)},
            "outputs": str(sig.outputs), "num_state_leaves": len(leaves)}
    meta["digest"] = payload_digest(arrays, meta)
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
        casts, as with an executor; floating ones finite); returns its outputs and keeps the
        new state."""
        if len(inputs) != len(self.input_names):
            raise TypeError(f"{self.meta['root']}.{self.name} takes inputs "
                            f"{self.meta['inputs']}, got {len(inputs)} values")
        leaves = jax.tree.leaves(inputs)
        for i, (leaf, dtype) in enumerate(zip(leaves, self._dtypes, strict=False)):
            got = np.result_type(leaf)
            name = self.input_names[i] if len(leaves) == len(self.input_names) else i
            where = f"{self.meta['root']}.{self.name}"
            if got != dtype and not isinstance(leaf, int | float):  # Python numbers: weak
                raise SpaceError(f"{where}: input {name!r} must be {np.dtype(dtype).name}, got "
                                 f"{got.name} (cast it: np.asarray(x, np.{np.dtype(dtype).name}))",
                                 component=self.meta["root"], api=self.name, argument=str(name))
            if np.issubdtype(np.dtype(dtype), np.inexact):
                bad = np.argwhere(~np.isfinite(np.asarray(leaf)))
                if bad.size:  # a NaN observation would get an answer that looks like one
                    raise SpaceError(f"{where}: input {name!r} is not finite at index "
                                     f"{tuple(int(k) for k in bad[0])} (NaN or inf)",
                                     component=self.meta["root"], api=self.name,
                                     argument=str(name))
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
    if payload_digest(arrays, meta) != digest:
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
        raise LoadError(f"{where}: the state has {len(leaves)} arrays, the "
                        f"executable expects {state_tree.num_leaves}")
    for i, (leaf, aval) in enumerate(zip(leaves, exported.in_avals, strict=False)):
        if leaf.dtype != aval.dtype or leaf.shape != aval.shape:
            raise LoadError(f"{where}: corrupt {what}: state array {i} is {leaf.dtype}"
                            f"{list(leaf.shape)}, the executable expects {aval.dtype}"
                            f"{list(aval.shape)}")
    return LoadedApi(exported, jax.tree.unflatten(state_tree, leaves), meta)
