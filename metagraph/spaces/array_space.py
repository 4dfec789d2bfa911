"""A space whose values are single arrays: the shared part of Box, Discrete, Bool and PRNGKey."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from metagraph.spaces.dims import BATCH, TIME, format_dim
from metagraph.spaces.space import Space, canonical_dtype, short_dtype


def _valid_dim(d: Any) -> bool:
    if isinstance(d, bool):
        return False
    if isinstance(d, int | np.integer):
        return d >= 0
    return type(d).__name__ == "_DimExpr"  # a symbolic dimension (B, 4*B) seen while tracing


class ArraySpace(Space):
    """Values are arrays of `leading_dims + shape` and one dtype."""

    def __init__(self, shape: tuple[int, ...], dtype: Any, batch: bool = False,
                 time: bool = False, time_major: bool = False):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if not all(_valid_dim(d) for d in shape):
            raise ValueError(f"{type(self).__name__}: shape must be non-negative ints, got {shape}")
        self.shape = tuple(int(d) if isinstance(d, int | np.integer) else d for d in shape)
        self.dtype = canonical_dtype(dtype)
        self.batch, self.time, self.time_major = bool(batch), bool(time), bool(time_major)

    # ---- structure ---------------------------------------------------------------------------
    def full_shape(self, batch_size: Any = BATCH, time_size: Any = TIME) -> tuple:
        """The value's shape with its leading time and batch dimensions (symbolic `B`/`T`
        unless sizes are given)."""
        return self.leading_dims(batch_size, time_size) + self.shape

    def to_abstract(self, batch_size: Any = BATCH, time_size: Any = TIME) -> jax.ShapeDtypeStruct:
        """A `jax.ShapeDtypeStruct` of this space (symbolic `B`/`T` unless sizes are given)."""
        return jax.ShapeDtypeStruct(self.full_shape(batch_size, time_size), self.dtype)

    def with_ranks(self, batch=None, time=None, time_major=None) -> ArraySpace:
        """A copy of this space with the given rank flags changed (`None` keeps one)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        if batch is not None:
            clone.batch = bool(batch)
        if time is not None:
            clone.time = bool(time)
        if time_major is not None:
            clone.time_major = bool(time_major)
        return clone

    # ---- values ------------------------------------------------------------------------------
    def zeros(self, batch_size: int = 1, time_size: int = 1) -> np.ndarray:
        """A NumPy array of zeros of this space's full shape and dtype."""
        return np.zeros(self.full_shape(batch_size, time_size), self.dtype)

    def contains(self, value: Any) -> bool:
        """True if `value` has this dtype, this value shape after any leading ranks, and is
        in bounds."""
        arr = np.asarray(value)
        if arr.dtype != self.dtype:
            return False
        lead = len(self.leading_dims())
        if arr.ndim != lead + len(self.shape) or arr.shape[lead:] != self.shape:
            return False
        return bool(self._in_bounds(arr))

    def _in_bounds(self, arr: np.ndarray) -> bool:
        return True

    # ---- text --------------------------------------------------------------------------------
    def _dims_text(self) -> str:
        return ",".join(self.leading_names() + tuple(format_dim(d) for d in self.shape))

    def __str__(self) -> str:
        return f"{self.dtype.name}[{self._dims_text()}]"

    def short(self) -> str:
        """A compact label, as drawn on an edge: `f32[B,4]`."""
        return f"{short_dtype(self.dtype)}[{self._dims_text()}]"

    def _extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        ranks = "".join(
            f", {flag}=True" for flag in ("batch", "time", "time_major") if getattr(self, flag)
        )
        return f"{type(self).__name__}({self._extra_repr()}{ranks})"

    def _key(self) -> tuple:
        return (type(self), self.shape, self.dtype, self.batch, self.time, self.time_major)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArraySpace) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


