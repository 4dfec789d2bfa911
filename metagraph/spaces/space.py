"""The base of every space: explicit batch and time ranks around a value shape."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from metagraph.spaces.dims import BATCH, TIME, format_dim

_SHORT_DTYPES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
}


def canonical_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype for `dtype`, refusing one that JAX would silently narrow."""
    dt = np.dtype(dtype)
    canon = np.dtype(jax.dtypes.canonicalize_dtype(dt))
    if canon != dt:
        raise ValueError(
            f"dtype {dt} would be silently narrowed to {canon} by JAX (64-bit types need "
            f"jax.config.update('jax_enable_x64', True)); use {canon} instead"
        )
    return dt


def short_dtype(dtype: np.dtype) -> str:
    """The short name of `dtype` used in labels (`f32`, `i32`, ...), or NumPy's name when it has
    none."""
    return _SHORT_DTYPES.get(np.dtype(dtype).name, np.dtype(dtype).name)


class Space:
    """A set of values. Leading batch (`B`) and time (`T`) ranks are explicit flags.

    With both ranks the layout is `[B, T, *shape]`, or `[T, B, *shape]` when `time_major`.
    """

    batch: bool = False
    time: bool = False
    time_major: bool = False

    # ---- ranks -------------------------------------------------------------------------
    def leading_dims(self, batch_size: Any = BATCH, time_size: Any = TIME) -> tuple:
        """The sizes of the leading ranks this space has, in order (time first when time-major)."""
        dims = []
        if self.batch:
            dims.append(batch_size)
        if self.time:
            dims.insert(0 if self.time_major else len(dims), time_size)
        return tuple(dims)

    def leading_names(self) -> tuple[str, ...]:
        """The leading ranks as text, as shown in labels: `('B',)`, `('T', 'B')`."""
        return tuple(format_dim(d) for d in self.leading_dims())

    def with_ranks(self, batch: bool | None = None, time: bool | None = None,
                   time_major: bool | None = None) -> Space:
        """A copy of this space with the given rank flags changed."""
        raise NotImplementedError

    # ---- what every space implements ------------------------------------------------------
    def to_abstract(self, batch_size: Any = BATCH, time_size: Any = TIME) -> Any:
        """A pytree of `jax.ShapeDtypeStruct` (symbolic `B`/`T` unless sizes are given)."""
        raise NotImplementedError

    def zeros(self, batch_size: int = 1, time_size: int = 1) -> Any:
        """A NumPy value of this space filled with zeros (or the lowest valid value)."""
        raise NotImplementedError

    def sample(self, seed: int | np.random.Generator | None = None, batch_size: int = 1,
               time_size: int = 1) -> Any:
        """A random NumPy value of this space."""
        raise NotImplementedError

    def contains(self, value: Any) -> bool:
        """True if `value` has this space's structure, shape (any B and T), dtype and bounds."""
        raise NotImplementedError

    def short(self) -> str:
        """A compact label, as drawn on an edge: `f32[B,4]`."""
        raise NotImplementedError

    def __contains__(self, value: Any) -> bool:
        return self.contains(value)


def generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A NumPy random generator from a seed, or `seed` itself when it already is one."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)
