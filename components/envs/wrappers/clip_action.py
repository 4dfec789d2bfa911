"""`ClipAction`: actions clipped to a bounded Box action space before the environment."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from components.envs.wrappers.wrapper import EnvironmentWrapper
from metagraph.spaces import Box


class ClipAction(EnvironmentWrapper):
    """`env` stepped with its actions clipped to its action space's bounds, as Gymnasium's
    `ClipAction` wrapper: a policy's Gaussian samples may leave the bounds, and its
    log-probabilities stay those of the samples it took.

    Args:
        env: the environment (see `EnvironmentWrapper`), its action space a Box with finite
            bounds.
        name: the scope name (default "clip_action").

    Raises:
        ValueError: the action space is not a bounded Box.
    """

    def __init__(self, env: Any, name: str | None = None):
        super().__init__(env, name)
        space = env.action_space
        if not isinstance(space, Box) or not (np.isfinite(space.low).all()
                                              and np.isfinite(space.high).all()):
            raise ValueError(f"ClipAction: the action space must be a Box with finite bounds, "
                             f"got {space!r}")
        self.low = np.broadcast_to(space.low, space.shape).astype(np.float32)
        self.high = np.broadcast_to(space.high, space.shape).astype(np.float32)

    def action(self, action: Any) -> Any:
        """`action` clipped to the bounds."""
        return jnp.clip(action, self.low, self.high)
