"""One environment as a `gymnasium.Env` (what `gymnasium.make("metagraph/<id>")` gives)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from components.envs.engine.make import make


class Env(gymnasium.Env):
    """One environment as a `gymnasium.Env` (a host pool of one), registered as
    `metagraph/<id>` for every registered id.

    Args:
        env_id: a registered id (`CartPole-v1`, `Hopper-v5`, a user's own, ...).
        render_mode: Must be None: the engine's environments do not render.
        **kwargs: the environment's keyword arguments (a MuJoCo task's Gymnasium ones).

    `reset(options={"state": ...})` starts from an exact physical state.
    """

    metadata = {"render_modes": []}

    def __init__(self, env_id: str, render_mode: str | None = None, **kwargs: Any):
        if render_mode is not None:
            raise ValueError(f"{env_id}: the engine's environments do not render")
        self._vector = make(env_id, 1, seed=0, num_threads=1, **kwargs)
        self.env_spec = self._vector.env_spec
        self.observation_space = self.env_spec.observation_space
        self.action_space = self.env_spec.action_space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Gymnasium's reset: `(obs, info)`; `options={"state": ...}` sets the physical state."""
        super().reset(seed=seed)
        physical = getattr(self._vector, "_physical_from", None)  # (Atari's pools: none)
        if seed is None and (physical is None or physical(options or {}) is None):
            seed = int(self.np_random.integers(0, 2**63))
        obs, info = self._vector.reset(seed=seed, options=options)
        return obs[0], {name: value[0] for name, value in info.items()}

    def step(self, action: Any):
        """Gymnasium's step: `(obs, reward, terminated, truncated, info)`; `info` holds the
        task's extras by name (a MuJoCo task's Gymnasium info terms, as floats; an array term
        as an array)."""
        batched = np.asarray(action)[None]  # checked before any cast (2**32 is not 0)
        obs, reward, terminated, truncated, info = self._vector.step(batched)
        if terminated[0] or truncated[0]:  # a single env hands back the final observation
            obs = info["final_obs"]
        terms = {name: value[0].item() if value.ndim == 1 else value[0]
                 for name, value in info.items()
                 if not name.startswith("_") and name not in ("final_obs", "final_info")}
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), terms

    def physical_state(self) -> np.ndarray:
        """The environment's physical state (Gymnasium's layout)."""
        return self._vector.physical_state()[0]

    def close(self) -> None:
        """Release the C++ pool."""
        self._vector.close()
