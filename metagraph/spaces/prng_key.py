"""PRNGKey: JAX random keys in their raw form (`jax.random.PRNGKey(seed)`, uint32[2])."""

from __future__ import annotations

import numpy as np

from metagraph.spaces.array_space import ArraySpace
from metagraph.spaces.space import generator


class PRNGKey(ArraySpace):
    """A raw threefry key, `uint32[2]`; with `batch=True` one key per batch row."""

    def __init__(self, batch: bool = False, time: bool = False, time_major: bool = False):
        super().__init__((2,), np.uint32, batch, time, time_major)

    def sample(self, seed=None, batch_size: int = 1, time_size: int = 1) -> np.ndarray:
        """Random raw `uint32[..., 2]` keys of this space's full shape."""
        info = np.iinfo(np.uint32)
        return generator(seed).integers(0, info.max, self.full_shape(batch_size, time_size),
                                        dtype=np.uint32, endpoint=True)

    def short(self) -> str:
        """A compact label, as drawn on an edge: `key[B]`."""
        lead = ",".join(self.leading_names())
        return f"key[{lead}]"
