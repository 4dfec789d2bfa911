"""`Rollout`: the component that steps an agent's environments (RLgraph's `EnvironmentStepper`),
and `Trajectory`, the typed record it returns (PureJaxRL's `Transition`, stacked over time).

A rollout owns the environments (an `Environment` component, `rollout.env`) and what runs
between two calls: the current observations and the return and length of every running
episode (counted as the `EpisodeStatistics` wrapper counts them: `finished_episodes`), as
component state. `run(act, key, steps)` steps every environment `steps` times inside one
`mg.scan`, each step an `env.step` call (so the environment is a node of every agent's graph,
whatever its door), with actions from `act(observations, key) -> (actions, extras)`; `extras`
is whatever the policy wants back (log-probabilities, values), stacked like the rest.

An episode counts as finished at the step that terminated or truncated it, whatever its return
(0 and negative returns included). Its return is the task's: where a wrapper scales the
rewards (`NormalizeReward`), the sum of the task's own, which the step keeps in
`extras["task_reward"]`; the trajectory's `rewards` are the scaled ones, what an agent learns
from.

For a game (a task of `num_players()` >= 2) the rollout also keeps whose turn it is in every
environment, as the task reports it (its "player_to_move" extra after each step; player 0 at a
game's start, the engine's convention): `run_with_turns` gives it to the acting function, across
calls and across games that end and restart within one (`SelfPlayRollout`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from components.envs.wrappers import (
    TASK_REWARD,
    Running,
    finished_episodes,
    keep_running,
    running_episodes,
    task_observation_space,
)
from metagraph.spaces import Bool, Box, Dict, Space

Act = Callable[[jax.Array, jax.Array], tuple[jax.Array, Any]]


class Trajectory(NamedTuple):
    """`steps` steps of `N` environments, time-major: every field but `last_observations` is
    [steps, N, ...].

    Attributes:
        observations: what the environments showed before each step (as they returned it, not
            preprocessed).
        actions: the actions each step took (what `act` returned).
        rewards: float32 rewards.
        terminated: the episode ended in a terminal state at this step.
        truncated: the episode was cut (time limit) at this step.
        final_observations: the observation each step reached, before any auto-reset (the
            next observation of the transition).
        extras: the second output of `act` at each step (a pytree), e.g. log-probabilities.
        episode_returns: the return of the episode that ended at this step, 0 where none did
            (read it with `done`, never by comparing with 0).
        last_observations: [N, ...] the observations after the last step (the next call's
            first).
        learner: [steps, N] bool, the learner's moves in games against other players
            (`SelfPlayRollout.play`: true where the learner moved); None from `Rollout.run`.
        task_extras: the task's named extra outputs at each step, {name: [steps, N]}, read in
            the state the step ended in (before any auto-reset): a game's "player_to_move"
            and "reward_player_<i>", Othello's "margin_player_0"; {} for a task without.
        movers: [steps, N] int32, in a game the player who made each step's move, as the
            task reported it (the player to move before the step); None for a task of one
            player.
        episode_lengths: [steps, N] int32, the steps of the episode that ended at this step, 0
            where none did (`Rollout.run` gives it; None from a trajectory made otherwise).
    """

    observations: jax.Array
    actions: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_observations: jax.Array
    extras: Any
    episode_returns: jax.Array
    last_observations: jax.Array
    learner: jax.Array | None = None
    task_extras: dict[str, jax.Array] = {}  # noqa: RUF012 (a NamedTuple's default, never mutated)
    movers: jax.Array | None = None
    episode_lengths: jax.Array | None = None

    @property
    def done(self) -> jax.Array:
        """[steps, N] bool: an episode ended at this step (terminated or truncated)."""
        return self.terminated | self.truncated

    @property
    def moves_again(self) -> jax.Array:
        """[steps, N] bool: the player who made each step's move is the player to move after
        it, false where the episode ended. In a game, as the task reports it (its
        "player_to_move" extra: a move that earns another), never the step's parity; in a
        task of one player, every step but an episode's last (its one player always moves
        next). What `losses.turn_discounts`, `negamax_gae`, `game_outcomes` and the search's
        discounts take: with it one advantage serves both (for one player, `turn_discounts`
        is 1 - done, GAE's own discounts).

        Raises:
            ValueError: a game's trajectory without its "player_to_move" extra.
        """
        if self.movers is None:
            return ~self.done
        if "player_to_move" not in self.task_extras:
            raise ValueError("Trajectory.moves_again: the trajectory has its movers but not "
                             "the task's 'player_to_move' extra (a game of num_players() >= "
                             "2 reports it)")
        after = self.task_extras["player_to_move"].astype(jnp.int32)
        return (after == self.movers) & ~self.done

    def episode_statistics(self) -> dict[str, jax.Array]:
        """The finished episodes' statistics, as every agent reports them:
        `episode_return_sum`, `episodes` (how many ended, whatever their returns) and, where
        the trajectory has their lengths, `episode_length_sum`."""
        statistics = {"episode_return_sum": self.episode_returns.sum(),
                      "episodes": self.done.sum().astype(jnp.int32)}
        if self.episode_lengths is not None:
            statistics["episode_length_sum"] = self.episode_lengths.sum()
        return statistics


def with_lead(space: Space, lead: tuple[int, ...]) -> Space:
    """`space` with leading axes `lead`: a `Bool` stays bool, a `Box` keeps its dtype (float32,
    or Atari's uint8 frames), a `Dict` entry by entry."""
    if isinstance(space, Dict):
        return Dict({k: with_lead(v, lead) for k, v in space.spaces.items()})
    if isinstance(space, Bool):
        return Bool((*lead, *space.shape))
    return Box((*lead, *space.shape), getattr(space, "dtype", np.float32))


class Rollout(mg.Component):
    """Steps `env` (an `Environment` component, or any component with its `reset(key)` and
    `step(action)` APIs, `num_envs` and `observation_space`) and keeps its running episodes
    (see the module docstring).

    Args:
        env: the environments.
        name: the scope name (default "rollout").
    """

    def __init__(self, env: mg.Component, name: str | None = None):
        super().__init__(name)
        self.env = env
        spec = getattr(env, "env_spec", None)
        self.num_players = int(getattr(spec, "num_players", 1))

    @property
    def num_envs(self) -> int:
        """How many environments each step drives."""
        return self.env.num_envs

    def observation_space_of(self, *lead: int) -> Space:
        """The space of observations with leading axes `lead` ([T, N, ...] for a trajectory's):
        `Bool` where the environments' observations are bool (MinAtar's planes), else a `Box`
        of theirs (float32, Atari's uint8); for a `Dict` observation (a game's {"obs",
        "legal"}) each entry so."""
        return with_lead(self.env.observation_space, lead)

    def acting_space_of(self, *lead: int) -> Space:
        """The space of the task's own observations with leading axes `lead` (those under
        the environment's wrappers): what an agent's acting APIs take."""
        return with_lead(task_observation_space(self.env), lead)

    def _running(self) -> tuple[Any, Running, jax.Array]:
        """The current observations, the running episodes (their returns and lengths so far)
        and, in a game, the player to move in each (state; zeros where the rollout steps no
        game)."""
        space = self.observation_space_of(self.num_envs)
        zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), space.to_abstract())
        first = jnp.zeros((self.num_envs,), jnp.int32)
        return (self.get_state("obs", zeros), running_episodes(self, self.num_envs),
                self.get_state("to_move", first) if self.num_players > 1 else first)

    @mg.api
    def reset(self, key):
        """Reset every environment (from `key`) and forget the running episodes; returns the
        first observations."""
        self._running()
        obs = self.env.reset(key)
        self.set_state("obs", obs)
        keep_running(self, Running.zeros(self.num_envs))
        if self.num_players > 1:  # every game at its start: player 0 moves
            self.set_state("to_move", jnp.zeros((self.num_envs,), jnp.int32))
        return obs

    def run(self, act: Act, key: jax.Array, steps: int) -> Trajectory:
        """`steps` steps of every environment, continuing their episodes, with actions from
        `act(observations, key) -> (actions, extras)` (one key per step, split from `key`).
        A method, not an API (it takes a function); the `env.step` calls it makes are
        recorded in the graph under the caller's API."""
        return self.run_with_turns(lambda obs, step_key, _: act(obs, step_key), key, steps)

    def run_with_turns(self, act: Callable[[Any, jax.Array, jax.Array], tuple[jax.Array, Any]],
                    key: jax.Array, steps: int) -> Trajectory:
        """`run` with `act(observations, key, to_move)` also given, in a game, the player to
        move in each environment ([N] int32, as the task reported it; see the module
        docstring); zeros where the rollout steps no game."""
        obs, episodes, to_move = self._running()

        def step(carry, step_key):
            obs, episodes, to_move = carry
            action, extras = act(obs, step_key, to_move)
            out = self.env.step(action)
            done = out.terminated | out.truncated
            # the task's rewards (a wrapper that scales them keeps these in the extras)
            episodes, finished = finished_episodes(
                episodes, (out.extras or {}).get(TASK_REWARD, out.reward), done)
            next_to_move = to_move
            if self.num_players > 1:  # a new game (auto-reset) starts with player 0
                next_to_move = jnp.where(done, 0,
                                         out.extras["player_to_move"].astype(jnp.int32))
            record = (obs, action, out.reward, out.terminated, out.truncated,
                      out.final_obs, extras, finished.returns)
            return ((out.obs, episodes, next_to_move),
                    (record, out.extras or {}, to_move, finished.lengths))

        (last, episodes, to_move), (record, task_extras, movers, lengths) = mg.scan(
            step, (obs, episodes, to_move), jax.random.split(key, steps))
        self.set_state("obs", last)
        keep_running(self, episodes)
        if self.num_players > 1:
            self.set_state("to_move", to_move)
        return Trajectory(*record, last_observations=last, task_extras=task_extras,
                          movers=movers if self.num_players > 1 else None,
                          episode_lengths=lengths)
