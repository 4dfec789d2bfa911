"""Bool: boolean arrays (flags such as `terminated`)."""

from __future__ import annotations

import numpy as np

from metagraph.spaces.array_space import ArraySpace
from metagraph.spaces.space import generator


class Bool(ArraySpace):
    """Boolean arrays of `shape` (`done` flags, masks)."""
    def __init__(self, shape: tuple[int, ...] = (), batch: bool = False, time: bool = False,
                 time_major: bool = False):
        super().__init__(shape, np.bool_, batch, time, time_major)

    def sample(self, seed=None, batch_size: int = 1, time_size: int = 1) -> np.ndarray:
        """Uniformly random booleans of this space's full shape."""
        return generator(seed).integers(0, 2, self.full_shape(batch_size, time_size)).astype(bool)

    def _extra_repr(self) -> str:
        return f"{self.shape}" if self.shape else ""
