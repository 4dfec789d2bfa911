"""What each native environment is: its Gymnasium id, spaces, episode limit and native core."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import numpy as np

try:
    import components.envs._native as _native
except ModuleNotFoundError as error:
    if error.name != "components.envs._native":
        raise
    raise ImportError(
        f"metagraph: the compiled environments (components.envs._native) are not built in "
        f"{__file__.rpartition('/')[0]}, a source tree: build them here with `pip install -e .`"
        f", or run from another directory to use the installed package") from None

_OBS_HIGH = {
    "CartPole-v1": np.array([4.8, np.inf, 12 * 2 * np.pi / 360 * 2, np.inf], np.float32),
    "Acrobot-v1": np.array([1.0, 1.0, 1.0, 1.0, 4 * np.pi, 9 * np.pi], np.float32),
    "Pendulum-v1": np.array([1.0, 1.0, 8.0], np.float32),
}
_MOUNTAIN_CAR_LOW = np.array([-1.2, -0.07], np.float32)
_MOUNTAIN_CAR_HIGH = np.array([0.6, 0.07], np.float32)
_ACTIONS: dict[str, Any] = {
    "CartPole-v1": 2, "Acrobot-v1": 3, "MountainCar-v0": 3,
    "MountainCarContinuous-v0": (-1.0, 1.0), "Pendulum-v1": (-2.0, 2.0),
}


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """A native environment: same spaces and limits as Gymnasium's own."""

    env_id: str
    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Space
    max_episode_steps: int
    state_dim: int
    state_rows: int  # the native state: rows of one 8-byte word per environment (batch.h)
    pool_class: Any
    ffi_reset: Any
    ffi_step: Any

    def __reduce__(self) -> tuple:
        """Pickled by id (its FFI capsules are process-local): unpickling looks the spec up."""
        return spec, (self.env_id,)

    @property
    def discrete(self) -> bool:
        """True if the action space is `Discrete`."""
        return isinstance(self.action_space, gymnasium.spaces.Discrete)

    @property
    def action_dtype(self) -> np.dtype:
        """The actions' dtype: int32 for discrete actions, float32 otherwise."""
        return np.dtype(np.int32) if self.discrete else np.dtype(np.float32)


def _observation_space(env_id: str) -> gymnasium.spaces.Box:
    if env_id.startswith("MountainCar"):
        return gymnasium.spaces.Box(_MOUNTAIN_CAR_LOW, _MOUNTAIN_CAR_HIGH, dtype=np.float32)
    high = _OBS_HIGH[env_id]
    return gymnasium.spaces.Box(-high, high, dtype=np.float32)


def _action_space(env_id: str) -> gymnasium.spaces.Space:
    actions = _ACTIONS[env_id]
    if isinstance(actions, int):
        return gymnasium.spaces.Discrete(actions)
    low, high = actions
    return gymnasium.spaces.Box(low, high, shape=(1,), dtype=np.float32)


SPECS: dict[str, EnvSpec] = {
    env_id: EnvSpec(env_id, _observation_space(env_id), _action_space(env_id),
                    info["max_steps"], info["state_dim"], info["state_rows"], info["pool"],
                    info["ffi_reset"], info["ffi_step"])
    for env_id, info in _native.ENVIRONMENTS.items()
}


def spec(env_id: str) -> EnvSpec:
    """The spec of `env_id` (with or without the `metagraph/` namespace)."""
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    key = env_id.removeprefix("metagraph/")
    if key not in SPECS:
        raise ValueError(f"unknown environment {env_id!r}; native environments: {sorted(SPECS)}")
    return SPECS[key]
