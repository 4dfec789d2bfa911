"""The space of a value that flowed during a trace: what an edge of the meta-graph carries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from metagraph.spaces.array_space import ArraySpace
from metagraph.spaces.boolean import Bool
from metagraph.spaces.box import Box
from metagraph.spaces.containers import Dict, Record, Tuple
from metagraph.spaces.dims import BATCH, TIME, is_dim
from metagraph.spaces.space import Space


def is_array_like(value: Any) -> bool:
    """An array, a tracer, a ShapeDtypeStruct, a NumPy scalar or a Python number."""
    if isinstance(value, bool | int | float):
        return True
    return hasattr(value, "shape") and hasattr(value, "dtype")


def space_of(value: Any, batch_size: Any = BATCH, time_size: Any = TIME) -> Space | None:
    """Describe `value` (concrete or abstract) as a space, recognising leading `B` / `T` dims.

    Dicts become `Dict`, NamedTuples `Record` (their None fields left out), other tuples and
    lists `Tuple`, `None` stays `None`. Raises `TypeError` for a
    leaf that is not array-like (a string, a component, an arbitrary object).
    """
    if value is None:
        return None
    if isinstance(value, Mapping):
        return Dict({str(k): _child(v, batch_size, time_size) for k, v in value.items()})
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return Record(type(value), {k: _child(v, batch_size, time_size)
                                    for k, v in zip(value._fields, value, strict=True)
                                    if v is not None})
    if isinstance(value, tuple | list):
        return Tuple(_child(v, batch_size, time_size) for v in value)
    if not is_array_like(value):
        leaves = jax.tree.leaves(value)
        if leaves and leaves != [value]:  # a registered pytree (namedtuple-like, dataclass)
            return Tuple(_child(v, batch_size, time_size) for v in leaves)
        raise TypeError(f"expected an array or a pytree of arrays, got {type(value).__name__}")
    if isinstance(value, bool | int | float):
        value = np.asarray(value, jax.dtypes.canonicalize_dtype(type(value)))
    shape, dtype = tuple(value.shape), np.dtype(value.dtype)
    batch = time = time_major = False
    if shape and is_dim(shape[0], batch_size):
        batch, shape = True, shape[1:]
        if shape and is_dim(shape[0], time_size):
            time, shape = True, shape[1:]
    elif shape and is_dim(shape[0], time_size):
        time, shape = True, shape[1:]
        if shape and is_dim(shape[0], batch_size):
            batch, time_major, shape = True, True, shape[1:]
    if dtype == np.bool_:
        return Bool(shape, batch=batch, time=time, time_major=time_major)
    # A value may carry a dtype that no declared space allows (a NumPy float64): describe it
    # faithfully so the error can say so.
    canon = np.dtype(jax.dtypes.canonicalize_dtype(dtype))
    kind = Box if dtype.kind in "fiu" else ArraySpace
    space = kind(shape, canon, batch=batch, time=time, time_major=time_major)
    space.dtype = dtype
    return space


def _child(value: Any, batch_size: Any, time_size: Any) -> Space:
    space = space_of(value, batch_size, time_size)
    return Tuple(()) if space is None else space


def abstract_of(value: Any) -> Any:
    """The `ShapeDtypeStruct` pytree of a (possibly traced) pytree of arrays."""
    return jax.tree.map(_abstract_leaf, value)


def _abstract_leaf(x: Any) -> jax.ShapeDtypeStruct:
    if hasattr(x, "dtype") and hasattr(x, "shape"):  # keep a NumPy float64 visible as such
        return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype)
    if not isinstance(x, bool | int | float):
        raise TypeError(f"expected an array or a pytree of arrays, got {type(x).__name__}")
    return jax.ShapeDtypeStruct((), jax.dtypes.canonicalize_dtype(type(x)))


def same_signature(a: Any, b: Any) -> bool:
    """True if two abstract pytrees have the same structure, shapes and dtypes."""
    la, ta = jax.tree.flatten(a)
    lb, tb = jax.tree.flatten(b)
    return ta == tb and all(
        tuple(x.shape) == tuple(y.shape) and np.dtype(x.dtype) == np.dtype(y.dtype)
        for x, y in zip(la, lb, strict=True)
    )
