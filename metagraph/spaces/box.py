"""Box: arrays of a fixed shape and dtype, optionally bounded elementwise."""

from __future__ import annotations

from typing import Any

import numpy as np

from metagraph.spaces.array_space import ArraySpace
from metagraph.spaces.space import generator


class Box(ArraySpace):
    """Real or integer arrays of `shape` with elementwise bounds `low <= x <= high`.

    >>> Box((4,), batch=True)                      # float32[B,4], unbounded
    >>> Box((2,), low=-1.0, high=1.0)              # float32[2] in [-1, 1]
    """

    def __init__(self, shape: tuple[int, ...] = (), dtype: Any = np.float32,
                 low: Any = -np.inf, high: Any = np.inf, batch: bool = False,
                 time: bool = False, time_major: bool = False):
        super().__init__(shape, dtype, batch, time, time_major)
        if self.dtype.kind not in "fiu":
            raise ValueError(f"Box: dtype must be a float or integer type, got {self.dtype}")
        try:
            self.low = np.broadcast_to(np.asarray(low, np.float64), self.shape).copy()
            self.high = np.broadcast_to(np.asarray(high, np.float64), self.shape).copy()
        except ValueError as e:
            raise ValueError(f"Box: bounds do not fit shape {self.shape}: {e}") from None
        if np.isnan(self.low).any() or np.isnan(self.high).any():
            raise ValueError("Box: bounds must not be NaN")
        if (self.low > self.high).any():
            raise ValueError("Box: some low bound exceeds its high bound")

    @property
    def bounded(self) -> bool:
        """True if every element has a finite lower and upper bound."""
        return bool(np.isfinite(self.low).all() and np.isfinite(self.high).all())

    def zeros(self, batch_size: int = 1, time_size: int = 1) -> np.ndarray:
        """Zeros where zero is within the bounds, else the nearest bound, so the value is
        contained."""
        value = np.clip(np.zeros(self.shape), self.low, self.high).astype(self.dtype)
        return np.broadcast_to(value, self.full_shape(batch_size, time_size)).copy()

    def sample(self, seed=None, batch_size: int = 1, time_size: int = 1) -> np.ndarray:
        """A random value: uniform where both bounds are finite (integers inclusive), a bound
        plus or minus an exponential where one is, a standard normal where neither is."""
        rng = generator(seed)
        shape = self.full_shape(batch_size, time_size)
        low, high = np.broadcast_to(self.low, shape), np.broadcast_to(self.high, shape)
        if self.dtype.kind in "iu":
            info = np.iinfo(self.dtype)
            lo = np.maximum(low, info.min).astype(np.int64)
            hi = np.minimum(high, info.max).astype(np.int64)
            return rng.integers(lo, hi, endpoint=True).astype(self.dtype)
        normal = rng.standard_normal(shape)
        expo = rng.exponential(size=shape)
        both = np.isfinite(low) & np.isfinite(high)
        value = np.where(np.isfinite(low), low + expo, np.where(np.isfinite(high), high - expo,
                                                                 normal))
        uniform = rng.uniform(np.where(both, low, 0.0), np.where(both, high, 1.0))
        return np.where(both, uniform, value).astype(self.dtype)

    def _in_bounds(self, arr: np.ndarray) -> bool:
        if self.dtype.kind == "f" and np.isnan(arr).any():
            return False
        return bool(((arr >= self.low) & (arr <= self.high)).all())

    def _extra_repr(self) -> str:
        bounds = ""
        if np.isfinite(self.low).any() or np.isfinite(self.high).any():
            lo, hi = (b.flat[0].item() if b.size and np.all(b == b.flat[0]) else b.tolist()
                      for b in (self.low, self.high))
            bounds = f", low={lo}, high={hi}"
        return f"{self.shape}, {self.dtype.name}{bounds}"

    def _key(self) -> tuple:
        return super()._key() + (self.low.tobytes(), self.high.tobytes())
