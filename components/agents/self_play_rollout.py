"""`SelfPlayRollout`: a `Rollout` of two-player games in which a learner plays one side of each
game against other players (earlier policies, a search, anything that picks legal moves). A
player schedule says who moves: the players alternate one move per step from a game's start
(the engine's convention for games, engine/task.h), so in game i the learner moves at the steps
t with t % num_players == side[i]. `play` gives the acting function that mask, and the
`Trajectory` it returns carries it as `learner` ([steps, N] bool), for the fit to take the
learner's moves only. The schedule counts from the call's first step, which must be every
game's first move (a `reset` just before): it holds for each environment's first game of the
call, and a game that ends within the call is followed by another that it does not follow
(path reweighting plays one game per path and masks what comes after).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from components.agents.rollout import Rollout, Trajectory

PlayAct = Callable[[Any, jax.Array, jax.Array], tuple[jax.Array, Any]]
"""`act(observations, key, learner_moves) -> (actions, extras)`: every game's move at one step,
`learner_moves` [N] bool true in the games where the learner is the player to move."""


class SelfPlayRollout(Rollout):
    """Steps a game's environments (`Rollout`'s `env`, a game's `Environment`: observations
    {"obs", "legal"}) with a learner on one side of each game (see the module docstring).

    Args:
        env: the games' environments (a task of `num_players()` >= 2).
        name: the scope name (default "rollout").

    Raises:
        ValueError: `env` steps a task that is no game.
    """

    def __init__(self, env: Any, name: str | None = None):
        super().__init__(env, name or "rollout")
        self.num_players = int(env.env_spec.num_players)
        if self.num_players < 2:
            raise ValueError(f"SelfPlayRollout: {env.env_spec.env_id} is no game (its task "
                             f"declares no num_players())")

    def learner_moves(self, t: jax.Array, side: jax.Array) -> jax.Array:
        """[N] bool: the games in which the learner (player `side` [N]) moves at step `t` of
        games started together (the schedule)."""
        return (t % self.num_players) == side

    def play(self, act: PlayAct, key: jax.Array, steps: int, side: jax.Array) -> Trajectory:
        """`steps` moves of every game, continuing them, the learner player `side[i]` in game
        i, with moves from `act(observations, key, learner_moves)`; the trajectory's
        `learner` is the schedule's mask at every step (see the module docstring: the games
        start at this call's first step)."""
        side = jnp.asarray(side, jnp.int32)

        def counted(obs, step_key, t):
            moves = self.learner_moves(t, side)
            action, extras = act(obs, step_key, moves)
            return action, (moves, extras)

        trajectory = self.run_counted(counted, key, steps)
        learner, extras = trajectory.extras
        return trajectory._replace(extras=extras, learner=learner)


__all__ = ["PlayAct", "SelfPlayRollout"]
