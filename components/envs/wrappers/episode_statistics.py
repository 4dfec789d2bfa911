"""`EpisodeStatistics`: each step tells the return and the length of every episode it ended;
`finished_episodes`, the arithmetic it and `components.agents.Rollout` count them with."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from components.envs.wrappers.normalize_reward import TASK_REWARD
from components.envs.wrappers.wrapper import EnvironmentWrapper
from metagraph.spaces import Box, Space

EPISODE_RETURN = "episode_return"
EPISODE_LENGTH = "episode_length"


class Running(NamedTuple):
    """The episodes under way in `N` environments: their returns [N] float32 so far and their
    lengths [N] int32 (steps taken)."""
    returns: jax.Array
    lengths: jax.Array

    @classmethod
    def zeros(cls, n: int) -> Running:
        """`n` episodes at their start."""
        return cls(jnp.zeros((n,), jnp.float32), jnp.zeros((n,), jnp.int32))


def finished_episodes(running: Running, reward: jax.Array, done: jax.Array
                      ) -> tuple[Running, Running]:
    """One step of `N` environments counted: the episodes under way after it (restarted where
    `done`) and the finished ones' return and length where `done` ([N] each; 0 elsewhere).

    Args:
        running: the episodes under way before the step.
        reward: [N] the step's rewards (the task's own: see `TASK_REWARD`).
        done: [N] bool, the step ended the episode (terminated or truncated); an episode
            counts as finished whatever its return (0 and negative returns included).
    """
    returns = running.returns + reward
    lengths = running.lengths + 1
    finished = Running(jnp.where(done, returns, 0.0), jnp.where(done, lengths, 0))
    return Running(jnp.where(done, 0.0, returns), jnp.where(done, 0, lengths)), finished


def running_episodes(component: mg.Component, n: int) -> Running:
    """`component`'s state of `n` running episodes: its `episode_return` and `episode_length`
    (created at their start)."""
    start = Running.zeros(n)
    return Running(component.get_state(EPISODE_RETURN, start.returns),
                   component.get_state(EPISODE_LENGTH, start.lengths))


def keep_running(component: mg.Component, running: Running) -> None:
    """`running` kept as `component`'s state (`running_episodes` reads it)."""
    component.set_state(EPISODE_RETURN, running.returns)
    component.set_state(EPISODE_LENGTH, running.lengths)


class EpisodeStatistics(EnvironmentWrapper):
    """`env` whose steps tell the episodes they ended, as Gymnasium's vector
    `RecordEpisodeStatistics` (its `info["episode"]["r"]` and `["l"]`) and PureJaxRL's
    `LogWrapper` (`returned_episode_returns`, `returned_episode_lengths`) do: a step's `extras`
    gain "episode_return" [N] float32, the return of the episode that ended there, and
    "episode_length" [N] int32, its steps, each 0 in the environments whose episode goes on.
    Returns are the task's: where a wrapper inside this one scales the rewards
    (`NormalizeReward`), the sum of the task's own it keeps in `extras["task_reward"]`.

    For a loop of one's own around `Environment.step`; an agent's `Rollout` counts the same
    way (`finished_episodes`) and reports them in its `Trajectory` (`episode_returns`,
    `episode_lengths`) without it. `reset` starts every episode again. Its state: the
    returns `episode_return` [N] and the lengths `episode_length` [N] of the episodes under
    way.

    Args:
        env: the environment (see `EnvironmentWrapper`).
        name: the scope name (default "episode_statistics").
    """

    def reset_observation(self, obs: Any) -> Any:
        """The first observations, every episode at its start."""
        running_episodes(self, self.num_envs)
        keep_running(self, Running.zeros(self.num_envs))
        return super().reset_observation(obs)

    def step_result(self, out: Any) -> Any:
        """The step, its `extras` with the finished episodes' returns and lengths."""
        out = super().step_result(out)
        extras = dict(out.extras or {})
        running, finished = finished_episodes(running_episodes(self, self.num_envs),
                                              extras.get(TASK_REWARD, out.reward),
                                              out.terminated | out.truncated)
        keep_running(self, running)
        extras.update({EPISODE_RETURN: finished.returns, EPISODE_LENGTH: finished.lengths})
        return out._replace(extras=extras)

    def extras_spaces(self) -> dict[str, Space]:
        """The finished episodes' returns [num_envs] float32 and lengths [num_envs] int32."""
        return {EPISODE_RETURN: Box((self.num_envs,)),
                EPISODE_LENGTH: Box((self.num_envs,), np.int32)}
