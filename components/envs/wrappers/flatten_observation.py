"""`FlattenObservation`: observations as vectors, for a network that reads vectors."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from components.envs.wrappers.wrapper import EnvironmentWrapper
from metagraph.spaces import Box, Dict, Space


def flat_space(space: Space) -> Box:
    """One observation's space as a vector: its elements in order, float32 (bool planes as 0.0
    and 1.0) with its bounds, uint8 frames as uint8."""
    dtype = np.dtype(np.uint8) if np.dtype(space.dtype) == np.uint8 else np.dtype(np.float32)
    size = int(np.prod(space.shape))
    low = np.asarray(getattr(space, "low", 0.0), np.float64)
    high = np.asarray(getattr(space, "high", 1.0), np.float64)
    return Box((size,), dtype, np.broadcast_to(low, space.shape).reshape(-1),
               np.broadcast_to(high, space.shape).reshape(-1))


class FlattenObservation(EnvironmentWrapper):
    """`env` observed as vectors [num_envs, d]: each observation's elements in order (a
    row-major reshape), float32 (bool planes as 0.0 and 1.0), uint8 frames staying uint8. A
    game's {"obs", "legal"} has its "obs" flattened and its legal moves as they are.

    Args:
        env: the environment (see `EnvironmentWrapper`).
        name: the scope name (default "flatten_observation").
    """

    @property
    def observation_space(self) -> Box | Dict:
        """One environment's observation as a vector (a game's with its legal moves)."""
        inner = self.env.observation_space
        if isinstance(inner, Dict):
            return Dict({**inner.spaces, "obs": flat_space(inner.spaces["obs"])})
        return flat_space(inner)

    def observation(self, obs: Any) -> Any:
        """`obs` [..., *shape] as vectors [..., d], in the dtype `observation_space` says."""
        inner = self.env.observation_space
        if isinstance(inner, Dict):
            return {**obs, "obs": _flat(obs["obs"], inner.spaces["obs"])}
        return _flat(obs, inner)


def _flat(obs: Any, space: Space) -> Any:
    rank = len(space.shape)
    flat = flat_space(space)
    return jnp.reshape(obs, obs.shape[:obs.ndim - rank] + flat.shape).astype(flat.dtype)
