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
- `NormalizeObservation`: observations to zero mean and unit variance from the running
  moments of those the environment gave, clipped (PPO's `normalise_observations`).
- `NormalizeReward`: rewards divided by the running standard deviation of the discounted
  return, clipped (PPO's `normalise_rewards`); the task's own rewards stay in the step's
  `extras["task_reward"]`, and the episode returns an agent reports are those.
- `FrameStack`: each observation the episode's last k, stacked on a new leading axis
  (Gymnasium's `FrameStackObservation`); an agent acts on stacks, and an evaluation keeps
  them on the host (`host_environment`, `HostFrameStack`). The agents' `frame_stack`.
- `ActionRepeat`: each action taken k times, the rewards summed, an episode's end ending the
  step (around an in-graph door's `Environment`); an evaluation repeats on the host
  (`HostActionRepeat`). The agents' `action_repeat`.
- `EpisodeStatistics`: each step's `extras` tell the return and the length of every episode
  it ended ("episode_return", "episode_length"; Gymnasium's `RecordEpisodeStatistics`,
  PureJaxRL's `LogWrapper`), for a loop of one's own around `step` (a `Rollout` counts the
  same way).

Any agent takes its environment wrapped (`env=`): `DQNAgent("CartPole-v1", config,
env=NormalizeObservation(Environment("CartPole-v1", config.num_envs)))`.

An agent acts on the bare task as it acted in training: its `greedy` and `act` take the
task's observations (`task_observation_space`), which `task_observations(env, obs)` turns
into what the wrapped environment gives, and give the actions the task is stepped with
(`task_actions(env, action)`). A wrapper that one observation or one action at a time
cannot say (`FrameStack`'s history, `ActionRepeat`'s repeats) has a `host_wrapper`: the
acting APIs take what the outermost such wrapper gives (stacks), and whoever acts from
elsewhere does the same on the host: `host_environment(env, vector_env)` wraps a host vector
env so (`evaluate`, a run's periodic evaluation and its videos do).

The wrapped environment is the wrapper's attribute `env`, so its state sits one scope deeper
(`agent/rollout/env/env`); run directories written before the wrapper load all the same
(`components.training.run.checkpoint_upgrades`).
"""

from components.envs.wrappers.action_repeat import ActionRepeat, HostActionRepeat
from components.envs.wrappers.clip_action import ClipAction
from components.envs.wrappers.episode_statistics import (
    EPISODE_LENGTH,
    EPISODE_RETURN,
    EpisodeStatistics,
    Running,
    finished_episodes,
    keep_running,
    running_episodes,
)
from components.envs.wrappers.flatten_observation import FlattenObservation, flat_space
from components.envs.wrappers.frame_stack import FrameStack, HostFrameStack
from components.envs.wrappers.normalize_observation import NormalizeObservation
from components.envs.wrappers.normalize_reward import TASK_REWARD, NormalizeReward
from components.envs.wrappers.wrapper import (
    EnvironmentWrapper,
    host_environment,
    host_wrappers,
    outermost_wrapper,
    task_actions,
    task_observation_space,
    task_observations,
    wrapper_of,
    wrappers_of,
)

__all__ = ["EPISODE_LENGTH", "EPISODE_RETURN", "TASK_REWARD", "ActionRepeat", "ClipAction",
           "EnvironmentWrapper", "EpisodeStatistics", "FlattenObservation", "FrameStack",
           "HostActionRepeat", "HostFrameStack", "NormalizeObservation", "NormalizeReward",
           "Running", "finished_episodes", "flat_space", "host_environment", "host_wrappers",
           "keep_running", "outermost_wrapper", "running_episodes", "task_actions",
           "task_observation_space", "task_observations", "wrapper_of", "wrappers_of"]
