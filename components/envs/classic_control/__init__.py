"""Gymnasium's classic-control tasks on the engine (`classic_control.h`, the same constants and
order of operations as Gymnasium 1.x, float64 state) with their pure-JAX twin (`twin.py`):
CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0 and Pendulum-v1. This file is
the family's spec: ids, spaces, the compiled module and the twin. None of them takes keyword
arguments."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from components.envs.classic_control.twin import TwinFunctionalEnv
from components.envs.engine import compiled_module
from components.envs.engine.catalogue import register
from components.envs.engine.spec import EnvSpec

_tasks = compiled_module("components.envs.classic_control._tasks", __file__)

_MOUNTAIN_CAR = gymnasium.spaces.Box(np.array([-1.2, -0.07], np.float32),
                                     np.array([0.6, 0.07], np.float32), dtype=np.float32)


def _box(high: list[float]) -> gymnasium.spaces.Box:
    high = np.array(high, np.float32)
    return gymnasium.spaces.Box(-high, high, dtype=np.float32)


def _continuous(bound: float) -> gymnasium.spaces.Box:
    return gymnasium.spaces.Box(-bound, bound, shape=(1,), dtype=np.float32)


# id: (compiled class, observation space, action space), Gymnasium's own.
TASKS: dict[str, tuple[Any, gymnasium.spaces.Box, gymnasium.spaces.Space]] = {
    "CartPole-v1": (_tasks.CartPole, _box([4.8, np.inf, 12 * 2 * np.pi / 360 * 2, np.inf]),
                    gymnasium.spaces.Discrete(2)),
    "Acrobot-v1": (_tasks.Acrobot, _box([1.0, 1.0, 1.0, 1.0, 4 * np.pi, 9 * np.pi]),
                   gymnasium.spaces.Discrete(3)),
    "MountainCar-v0": (_tasks.MountainCar, _MOUNTAIN_CAR, gymnasium.spaces.Discrete(3)),
    "MountainCarContinuous-v0": (_tasks.MountainCarContinuous, _MOUNTAIN_CAR, _continuous(1.0)),
    "Pendulum-v1": (_tasks.Pendulum, _box([1.0, 1.0, 8.0]), _continuous(2.0)),
}


def make_spec(env_id: str, kwargs: dict[str, Any]) -> EnvSpec:
    """The spec of a classic-control id (they take no keyword arguments)."""
    if kwargs:
        raise TypeError(f"{env_id} takes no keyword arguments (only the MuJoCo tasks take "
                        f"Gymnasium's, such as forward_reward_weight), got {sorted(kwargs)}")
    cls, observation_space, action_space = TASKS[env_id]
    task = cls(env_id, {})
    return EnvSpec(env_id, observation_space, action_space, int(task.max_steps), task)


for _env_id, (_cls, _, _) in TASKS.items():
    register(_env_id, make_spec, twin=TwinFunctionalEnv,
             max_episode_steps=int(_cls(_env_id, {}).max_steps))
