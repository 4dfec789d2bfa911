"""Wrappers: components around an `Environment` (or another wrapper) with the same API, each
one transformation, as Gymnasium's and PureJaxRL's wrappers are.

A wrapper has `reset(key)` and `step(action)` APIs returning what the environment's return
after its transformation, the same `num_envs`, `env_spec`, `door` and `action_space`, and an
`observation_space` that says what it gives. An agent steps a wrapped environment as it steps
an `Environment` (`components.agents.parts.make_env`), and a user's wrapper subclasses
`EnvironmentWrapper`, overriding `observation`/`observation_space` (or `action`).

- `EnvironmentWrapper`: the base, which changes nothing; `unwrapped` is the `Environment`.
- `FlattenObservation`: observations as vectors [num_envs, d] for a network that reads
  vectors (an MLP), float32 (uint8 frames stay uint8); a game's {"obs", "legal"} keeps its
  legal moves.
- `ClipAction`: actions clipped to a bounded Box action space (PPO's `clip_actions`).

An agent acts on the bare task as it acted in training: its `greedy` and `act` take the
task's observations (`task_observation_space`), which `task_observations(env, obs)` turns
into what the wrapped environment gives, and give the actions the task is stepped with
(`task_actions(env, action)`).

The wrapped environment is the wrapper's attribute `env`, so its state sits one scope deeper
(`agent/rollout/env/env`); run directories written before the wrapper load all the same
(`components.training.run.checkpoint_upgrades`).
"""

from components.envs.wrappers.clip_action import ClipAction
from components.envs.wrappers.flatten_observation import FlattenObservation, flat_space
from components.envs.wrappers.wrapper import (
    EnvironmentWrapper,
    task_actions,
    task_observation_space,
    task_observations,
)

__all__ = ["ClipAction", "EnvironmentWrapper", "FlattenObservation", "flat_space",
           "task_actions", "task_observation_space", "task_observations"]
