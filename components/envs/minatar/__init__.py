"""MinAtar (Young and Tian 2019) on the engine: Breakout, Asterix, Freeway, Seaquest and
SpaceInvaders, the `minatar` package's rules in C++ (`minatar.h`, one header per game), with
its sticky actions and difficulty ramping. Ids `MinAtar-Breakout-v0` ...; gymnax's names
(`Breakout-MinAtar`) are aliases.

Observations are the game's planes, bool[10, 10, C], channels last, as the package's
`state()` (`EnvSpec.planes` says (10, 10, C)). Six actions, or the game's minimal
set with `minimal_action_set=True` (the package's `minimal_action_set()`, gymnax's default:
Breakout's no-op, left, right). Keyword arguments: `sticky_action_prob` (0.1),
`difficulty_ramping` (True), `minimal_action_set` (False), `max_episode_steps` (Gymnasium's
name, gymnax's limits: 1000; Freeway 2500)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from components.envs.engine import compiled_module
from components.envs.engine.catalogue import observation_shape, register
from components.envs.engine.spec import EnvSpec

_tasks = compiled_module("components.envs.minatar._tasks", __file__)

# id: (compiled class, the package's game name)
TASKS: dict[str, tuple[Any, str]] = {
    "MinAtar-Breakout-v0": (_tasks.Breakout, "breakout"),
    "MinAtar-Asterix-v0": (_tasks.Asterix, "asterix"),
    "MinAtar-Freeway-v0": (_tasks.Freeway, "freeway"),
    "MinAtar-Seaquest-v0": (_tasks.Seaquest, "seaquest"),
    "MinAtar-SpaceInvaders-v0": (_tasks.SpaceInvaders, "space_invaders"),
}
MINATAR_IDS = tuple(TASKS)


def make_spec(env_id: str, kwargs: dict[str, Any]) -> EnvSpec:
    """The spec of a MinAtar id made with `kwargs` (sticky_action_prob, difficulty_ramping,
    minimal_action_set, max_episode_steps)."""
    cls, _ = TASKS[env_id]
    task = cls(env_id, kwargs)
    observations = gymnasium.spaces.Box(0, 1, tuple(task.obs_shape), np.bool_)
    return EnvSpec(env_id, observations, gymnasium.spaces.Discrete(int(task.num_actions)),
                   int(task.max_steps), task)



for _env_id, (_cls, _game) in TASKS.items():
    _name = _game.title().replace("_", "")
    register(_env_id, make_spec, max_episode_steps=int(_cls(_env_id, {}).max_steps),
             aliases=(f"{_name}-MinAtar",))

__all__ = ["TASKS", "MINATAR_IDS", "make_spec", "observation_shape"]
