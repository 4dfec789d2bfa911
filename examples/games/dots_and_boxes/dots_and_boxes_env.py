"""Dots and Boxes on metagraph's environment engine, a game the library does not ship and one
where a player may move again (a line that completes a box earns the next line):
`dots_and_boxes.h` is the game, this file its ids, spaces and OpenSpiel twins. Importing it
builds the header (once; cached by its contents) and registers two boards:

    import dots_and_boxes_env  # this file, from wherever it lives
    import components.envs as envs

    envs.num_players("DotsAndBoxes2x2-v0")      # 2: its task says it is a game
    pool = envs.make("DotsAndBoxes3x3-v0", 64)  # host pool; info["player_to_move"]

    metagraph train DotsAndBoxes3x3-v0 --env-module dots_and_boxes_env.py --algo alphazero
    metagraph evaluate RUN --opponent mcts:100  # OpenSpiel's search, on OpenSpiel's game

- "DotsAndBoxes2x2-v0": 2 x 2 boxes, 12 lines (OpenSpiel's "dots_and_boxes" with its
  defaults), small enough to solve exactly (the tests do);
- "DotsAndBoxes3x3-v0": 3 x 3 boxes, 24 lines.

docs/your-own-game.md says what a game may do (a player moving again) and which algorithms
take it.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium
import numpy as np

import components.envs as envs

HERE = os.path.dirname(os.path.abspath(__file__))
BOARDS = {"DotsAndBoxes2x2-v0": (2, 2), "DotsAndBoxes3x3-v0": (3, 3)}


# Both boards in one module: one build of the header, not one a board.
_compiled = envs.build_extension(
    os.path.join(HERE, "dots_and_boxes.h"),
    [f"dots_and_boxes::DotsAndBoxes{rows}x{columns}" for rows, columns in BOARDS.values()])


def _register(env_id: str, rows: int, columns: int) -> None:
    task_class = getattr(_compiled, f"DotsAndBoxes{rows}x{columns}")

    def make_spec(made_id: str, kwargs: dict[str, Any]) -> envs.EnvSpec:
        """The spec of the board (it takes no keyword arguments: the task says so)."""
        task = task_class(made_id, kwargs)
        observations = gymnasium.spaces.Box(0, 1, (2 * rows + 1, 2 * columns + 1, 3),
                                            np.bool_)
        return envs.EnvSpec(made_id, observations,
                            gymnasium.spaces.Discrete(task.num_actions), int(task.max_steps),
                            task)

    envs.register(env_id, make_spec,
                  openspiel=f"dots_and_boxes(num_cols={columns},num_rows={rows})")


for _env_id, (_rows, _columns) in BOARDS.items():
    _register(_env_id, _rows, _columns)
