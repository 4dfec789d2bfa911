"""One MuJoCo environment as a `gymnasium.Env`: what `gymnasium.make("metagraph/Hopper-v5")`
gives."""

from __future__ import annotations

from typing import Any

import numpy as np

from components.envs.mujoco.vector_env import MujocoVectorEnv
from components.envs.single_env import NativeEnv


class MujocoEnv(NativeEnv):
    """One MuJoCo environment (a host pool of one) with Gymnasium's v5 semantics.

    Args:
        env_id: "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5" or "Ant-v5".
        render_mode: Must be None: these environments do not render.
        **kwargs: Gymnasium's keyword arguments of the task (see `MujocoVectorEnv`).

    `reset(options={"qpos": ..., "qvel": ...})` starts from exact positions and velocities.
    """

    metadata = {"render_modes": []}

    def __init__(self, env_id: str, render_mode: str | None = None, **kwargs: Any):
        if render_mode is not None:
            raise ValueError(f"{env_id}: the native MuJoCo environments do not render")
        self._vector = MujocoVectorEnv(env_id, 1, seed=0, **kwargs)
        self.env_spec = self._vector.env_spec
        self.observation_space = self.env_spec.observation_space
        self.action_space = self.env_spec.action_space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Gymnasium's reset: `(obs, info)`; `options={"qpos": ..., "qvel": ...}` sets the
        positions and velocities exactly."""
        super(NativeEnv, self).reset(seed=seed)
        if seed is None and not (options and ("qpos" in options or "qvel" in options)):
            seed = int(self.np_random.integers(0, 2**63))
        obs, info = self._vector.reset(seed=seed, options=options)
        return obs[0], info

    def physical_state(self) -> np.ndarray:
        """Positions then velocities (Gymnasium's `state_vector()`)."""
        return self._vector.physical_state()[0]
