"""Discrete: integer scalars (or arrays of them) in [0, n)."""

from __future__ import annotations

from typing import Any

import numpy as np

from metagraph.checks import positive_int
from metagraph.spaces.array_space import ArraySpace
from metagraph.spaces.space import generator


class Discrete(ArraySpace):
    """Integers in `[0, n)`; `shape=()` for one choice, a shape for several independent ones."""

    def __init__(self, n: int, shape: tuple[int, ...] = (), dtype: Any = np.int32,
                 batch: bool = False, time: bool = False, time_major: bool = False):
        positive_int(n, "Discrete: n")
        super().__init__(shape, dtype, batch, time, time_major)
        if self.dtype.kind not in "iu":
            raise ValueError(f"Discrete: dtype must be an integer type, got {self.dtype}")
        if n - 1 > np.iinfo(self.dtype).max:
            raise ValueError(f"Discrete: n={n} does not fit dtype {self.dtype} (largest value "
                             f"{np.iinfo(self.dtype).max}); use a smaller n or a wider dtype")
        self.n = int(n)

    def sample(self, seed=None, batch_size: int = 1, time_size: int = 1) -> np.ndarray:
        """Uniformly random integers in [0, n) of this space's full shape and dtype."""
        return generator(seed).integers(0, self.n, self.full_shape(batch_size, time_size)).astype(
            self.dtype)

    def _in_bounds(self, arr: np.ndarray) -> bool:
        return bool(((arr >= 0) & (arr < self.n)).all())

    def _extra_repr(self) -> str:
        return f"{self.n}" + (f", shape={self.shape}" if self.shape else "")

    def _key(self) -> tuple:
        return super()._key() + (self.n,)
