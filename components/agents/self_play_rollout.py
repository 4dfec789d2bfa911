"""`SelfPlayRollout`: a `Rollout` of two-player games in which a learner plays one side of each
game against other players (earlier policies, a search, anything that picks legal moves). The
task says who moves: `Rollout` keeps the player to move in every game (player 0 at a game's
start, then the task's "player_to_move" after each step, engine/task.h), so in game i the
learner moves where that player is `side[i]`, across calls and across games that end and
restart within one. `play` gives the acting function that mask, and the `Trajectory` it
returns carries it as `learner` ([steps, N] bool), for the fit to take the learner's moves
only.
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
        if self.num_players < 2:
            raise ValueError(f"SelfPlayRollout: {env.env_spec.env_id} is no game (its task "
                             f"declares no num_players())")

    def play(self, act: PlayAct, key: jax.Array, steps: int, side: jax.Array) -> Trajectory:
        """`steps` moves of every game, continuing them, the learner player `side[i]` in game
        i, with moves from `act(observations, key, learner_moves)`; the trajectory's
        `learner` is that mask at every step (the games where player `side[i]` was to move)."""
        side = jnp.asarray(side, jnp.int32)

        def counted(obs, step_key, to_move):
            moves = to_move == side
            action, extras = act(obs, step_key, moves)
            return action, (moves, extras)

        trajectory = self.run_with_turns(counted, key, steps)
        learner, extras = trajectory.extras
        return trajectory._replace(extras=extras, learner=learner)


__all__ = ["PlayAct", "SelfPlayRollout"]
