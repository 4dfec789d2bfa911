"""Path reweighting in self-play: the paths of `ReweightAgent` on a game.

On a two-player game (`components.envs.games`) the agent plays itself: each of the N paths is
one whole game of the current policy, as player 0 in half of them and player 1 in the others,
against the current policy (half the games) or one of the `pool_size` earlier policies kept in
the state (`pool_0` ...: a snapshot of the policy every `snapshot_every` iterations; `pool_0`
keeps the first, the untrained policy, and the others take turns, the oldest replaced). q(p) is
the game's outcome for the learner (+1, 0, -1: `quality.game_outcome`; with `quality =
"quick_outcome"` wins are ranked by speed and losses by length, `quality.quick_outcome`; with
`quality = "margin"` wins and losses by the final stone margin the task reports as its extra
"margin_player_0", Othello's disc margin, `quality.margin_outcome`), and the weighted maximum
likelihood fits only the learner's moves (the mask is 1 on them). With probability `explore` a
ply's move (either side's) is a uniformly random legal one instead of the policy's, so that the
games stay varied once the policy is nearly deterministic; with `fit_explored = False` the
learner's random moves are left out of the fit (the mask is 0 on them). With
`search_simulations` > 0 the learner's other moves are a search's (`PolicySearch`: Gumbel
MuZero with the policy as its prior and random playouts as its values), so that the paths
reweighted and fitted are those of the policy improved by the search. Observations are the
mover's view with its legal moves by name (the game's `Environment`: {"obs", "legal"}), and the
default policy a `MaskedPolicy`.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from components.agents.policy_search import PolicySearch
from components.agents.self_play_rollout import SelfPlayRollout
from components.policy.masked_policy import ILLEGAL_LOGIT, MaskedPolicy
from components.reweighting import quality
from metagraph.differentiate import copy_parameters

MARGIN = "margin_player_0"  # the extra a game's task reports its stone margin as (Othello)
GAMES_ONLY = ("quick_outcome", "margin")  # qualities of a game's outcome
NOT_FOR_GAMES = ("max_height", "return_and_height")  # qualities of a single-agent task's path


class GamePaths:
    """The paths of a two-player game (see the module docstring; the source
    `components.agents.reweight_paths.paths_of` chooses for a game)."""

    def check_quality(self, name: str, env_id: str, env_spec: Any) -> None:
        """A ValueError where the quality `name` scores no game (`check_quality`)."""
        check_quality(name, env_id, env_spec, self_play=True)

    def rollout(self, env: mg.Component) -> SelfPlayRollout:
        """The agent's rollout: a learner on one side of each game."""
        return SelfPlayRollout(env)

    def pool(self, env: mg.Component, config: Any) -> list[mg.Component]:
        """The `pool_size` earlier policies the learner plays (`take_snapshot` fills them)."""
        return [MaskedPolicy(env.action_space, value=None, hidden=config.hidden)
                for _ in range(config.pool_size)]

    def searcher(self, agent: mg.Component, env_id: str) -> PolicySearch:
        """The search that plays the learner's moves (`search_simulations` > 0)."""
        config = agent.config
        return PolicySearch("ReweightAgent", env_id, agent.rollout.env, agent.policy,
                            config.search_simulations, config.search_rollouts,
                            env_kwargs=config.env_kwargs)

    def sample(self, agent: mg.Component, reset_key: jax.Array,
               key: jax.Array) -> tuple[dict[str, Any], jax.Array]:
        """One game in each of the agent's N environments (`game_paths`)."""
        return game_paths(agent, reset_key, key)


def check_quality(name: str, env_id: str, env_spec: Any, self_play: bool) -> None:
    """A ValueError where the quality `name` does not score this task's paths: a game's
    outcome for a task that is no game or the reverse, or the stone margin for a game whose
    task does not report it."""
    if name in (NOT_FOR_GAMES if self_play else GAMES_ONLY):
        raise ValueError(f"ReweightAgent: quality={name!r} is not one for "
                         f"{env_id} ({'a game' if self_play else 'not a game'})")
    names = env_spec.extras_names
    if name == "margin" and MARGIN not in names:
        raise ValueError(f"ReweightAgent: quality='margin' ranks games by the stone margin "
                         f"their task reports as the extra {MARGIN!r} (Othello's disc "
                         f"margin); {env_spec.env_id} reports {list(names)}")


def game_paths(agent: mg.Component, reset_key: jax.Array,
               key: jax.Array) -> tuple[dict[str, Any], jax.Array]:
    """One game in each of `agent`'s N environments (see the module docstring): the paths
    [N, T, ...] with the mask 1 on the learner's moves, and q(p) the outcome for the
    learner (or the agent's own quality of the paths, `ReweightAgent.scored`)."""
    n, horizon = agent.config.num_envs, agent.horizon
    spec = agent.rollout.env.env_spec
    shape = spec.planes or spec.observation_space.shape
    cells = math.prod(shape[:-1] if len(shape) > 1 else shape)  # the margin's scale
    side_key, opponent_key, key = jax.random.split(key, 3)
    side = jnp.arange(n) % 2  # the learner's player in each game
    iteration = agent.get_state("iteration", jnp.zeros((), jnp.int32))
    filled = jnp.minimum(iteration // agent.config.snapshot_every, len(agent.pool))
    # 0: the current policy; k >= 1: pool_{k-1}, among those filled (half the games)
    earlier = 1 + jax.random.randint(opponent_key, (n,), 0, jnp.maximum(filled, 1))
    opponent = jnp.where((jnp.arange(n) // 2) % 2 == 0, 0,
                         jnp.where(filled > 0, earlier, 0))
    agent.rollout.reset(reset_key)

    def ply(obs, step_key, learner_moves):
        logits = jnp.stack([agent.policy.distribution_params(obs)]
                           + [p.distribution_params(obs) for p in agent.pool])
        chosen = jnp.where(learner_moves[:, None], logits[0],
                           jnp.take_along_axis(logits, opponent[None, :, None], 0)[0])
        explore_key, step_key = jax.random.split(step_key)
        legal = obs["legal"]
        explore = jax.random.uniform(explore_key, (n, 1)) < agent.config.explore
        chosen = jnp.where(explore, jnp.where(legal, 0.0, ILLEGAL_LOGIT), chosen)
        action = agent.policy.distribution.sample(chosen, step_key)
        if agent.searcher is not None:  # the learner's moves (not its random ones) searched
            to_move = jnp.where(learner_moves, side, 1 - side)
            searched = agent.searcher.moves(obs, jax.random.fold_in(step_key, 1), to_move)
            action = jnp.where(learner_moves & ~explore[:, 0], searched, action)
        fitted = learner_moves if agent.config.fit_explored else learner_moves & ~explore[:, 0]
        return action, fitted

    trajectory = agent.rollout.play(ply, key, horizon, side)
    observations, actions, rewards = (trajectory.observations, trajectory.actions,
                                      trajectory.rewards)
    done, learner = trajectory.done, trajectory.extras  # the learner's moves to fit
    in_game = on_path(done)
    paths = {"obs": jax.tree.map(lambda x: x.swapaxes(0, 1), observations),
             "action": actions.swapaxes(0, 1), "reward": rewards.swapaxes(0, 1),
             "mask": (in_game * learner).swapaxes(0, 1),
             "plies": in_game.swapaxes(0, 1)}  # both sides' moves: the steps taken
    outcome = quality.game_outcome(paths["reward"], in_game.swapaxes(0, 1), side,
                                   trajectory.movers.swapaxes(0, 1))
    paths.update(outcome=outcome, side=side)

    def by_name():
        if agent.config.quality == "quick_outcome":
            return quality.quick_outcome(outcome, in_game.sum(0), horizon)
        if agent.config.quality == "margin":  # the stone margin the task reports
            ended_here = trajectory.terminated & (in_game > 0)  # where each game ended
            first = (trajectory.task_extras[MARGIN] * ended_here).sum(0)
            margin = jnp.where(side == 0, first, -first)  # for the learner's side
            return quality.margin_outcome(outcome, margin, cells)
        return outcome

    q = agent.scored(paths, by_name)
    take_snapshot(agent, iteration)
    # the path's return is the outcome, at the learner's first fitted move (in its mask)
    first = jnp.argmax(paths["mask"] > 0, axis=1)
    paths["reward"] = jnp.zeros_like(paths["reward"]).at[jnp.arange(n), first].set(outcome)
    return paths, q

def on_path(done: jax.Array) -> jax.Array:
    """float32 [T, N]: 1 on each path's steps, from the first up to and including the step
    that ended its episode (or game), 0 after it; `done` [T, N] the episodes' ends."""
    ended = jnp.cumsum(done, axis=0) > 0  # ended at or before step t
    return 1.0 - jnp.concatenate([jnp.zeros_like(ended[:1]), ended[:-1]]).astype(jnp.float32)


def take_snapshot(agent: mg.Component, iteration: jax.Array) -> None:
    """Every `snapshot_every` iterations, the current policy's parameters into the
    pool's next slot (the first into `pool_0`, kept; then the oldest of the others
    replaced); the iteration counted."""
    every, size = agent.config.snapshot_every, len(agent.pool)
    taken = iteration // every  # snapshots before this one
    # pool_0 keeps the first (the untrained policy); the others take turns
    slot = jnp.where(taken == 0, 0, 1 + (taken - 1) % max(size - 1, 1)) if size > 1 else 0
    due = iteration % every == 0
    for k, member in enumerate(agent.pool):
        copy_parameters(agent.policy, member, where=due & (slot == k))
    agent.set_state("iteration", iteration + 1)
