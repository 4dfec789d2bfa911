"""Two-player, zero-sum, turn-based board games on the engine, with OpenSpiel's rules:
Connect Four (6x7, "ConnectFour-v0"), Othello (8x8, "Othello-v0") and Hex (11x11, no swap rule,
"Hex-v0"). Every door of the engine steps them (`components.envs.make`, `make_functional`,
`Environment`, `gymnasium.make("metagraph/Othello-v0")`); `self_play.py` gives a batch of games
in pgx's shape and `pettingzoo_env.py` one game as a PettingZoo AEC environment.

Conventions (the C++ side, `board_game.h`, says the same):

- Player 0 moves first; the players alternate, one move per step (Othello's pass, action 64,
  is a move, legal only when the player has no other).
- `legal_mask()` (host pool) and `legal_mask(state)` (in-graph) give the legal actions; an
  illegal action is refused on every door, naming the environment, the action and its index,
  and no environment moves.
- The reward a step returns is that of the player who moved: +1 win, -1 loss, 0 draw or not
  over. `terminated` is true at the game's end (the next game starts in the same step).
- Extras (`info[name]`; in-graph `door.step(..., extras=True).extras`, by name), float32[3]
  per game: `EXTRAS` = [player to move after the step (-1: the game ended), player 0's reward,
  player 1's reward].
- Observations: the board from the point of view of the player to move (at a game's end, the
  player who would have moved next), float32 planes `EnvSpec.planes` = [rows, columns,
  planes] flattened row-major, row 0 the top row: plane 0 the player's own stones, plane 1 the
  opponent's; Hex adds plane 2, all ones when the player to move is player 1 (white, who joins
  left and right; black joins top and bottom).
- The physical state (`physical_state()`, `reset(options={"state": ...})`): each cell, row-major
  from the top row, holding 0 or 1 (whose stone) or -1 (empty), then the player to move. A state
  that is no position of the game, or whose game is over, has no legal action and is refused.

Actions: Connect Four a column 0-6; Othello 8 * row + column, 64 to pass; Hex 11 * row + column.
None of the games takes keyword arguments.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from components.envs.engine import compiled_module
from components.envs.engine.catalogue import observation_shape, register
from components.envs.engine.spec import EnvSpec
from components.envs.engine.symmetry import board_symmetries

_tasks = compiled_module("components.envs.games._tasks", __file__)

# id: compiled class.
GAMES: dict[str, Any] = {
    "ConnectFour-v0": _tasks.ConnectFour,
    "Othello-v0": _tasks.Othello,
    "Hex-v0": _tasks.Hex,
}
GAME_IDS = tuple(GAMES)
# What each of a step's extras is (every game's; Othello's task adds "margin_player_0").
EXTRAS = ("player_to_move", "reward_player_0", "reward_player_1")
# The same games in OpenSpiel (`pyspiel.load_game(name)`), whose rules these are.
OPENSPIEL_NAMES = {"ConnectFour-v0": "connect_four", "Othello-v0": "othello", "Hex-v0": "hex"}


# The symmetries of each board that keep its rules and its first position (Othello's four
# centre discs; Hex's edges, each player's own): (names, what the actions are, extra actions).
SYMMETRIES = {
    "ConnectFour-v0": (("flip_lr",), "columns", 0),
    "Othello-v0": (("rot180", "transpose", "antitranspose"), "cells", 1),  # 64: the pass
    "Hex-v0": (("rot180",), "cells", 0),
}


def make_spec(env_id: str, kwargs: dict[str, Any]) -> EnvSpec:
    """The spec of a game id (they take no keyword arguments), with its board's symmetries
    (`SYMMETRIES`)."""
    if kwargs:
        raise TypeError(f"{env_id} takes no keyword arguments, got {sorted(kwargs)}")
    task = GAMES[env_id](env_id, {})
    observations = gymnasium.spaces.Box(0.0, 1.0, (int(task.obs_dim),), np.float32)
    info = dict(task.info)
    names, actions, extra = SYMMETRIES[env_id]
    symmetries = board_symmetries(int(info["rows"]), int(info["columns"]), int(info["planes"]),
                                  names, actions=actions, extra_actions=extra)
    return EnvSpec(env_id, observations, gymnasium.spaces.Discrete(int(task.num_actions)),
                   int(task.max_steps), task, symmetries=symmetries)


for _env_id, _cls in GAMES.items():
    register(_env_id, make_spec, max_episode_steps=int(_cls(_env_id, {}).max_steps),
             aliases=(OPENSPIEL_NAMES[_env_id],), openspiel=OPENSPIEL_NAMES[_env_id])

__all__ = ["EXTRAS", "GAMES", "GAME_IDS", "OPENSPIEL_NAMES", "SYMMETRIES", "make_spec",
           "observation_shape"]
