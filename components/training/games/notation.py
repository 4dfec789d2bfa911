"""How `metagraph play` writes a game's board and moves and reads a person's move: a
`Notation`, chosen for a game by `notation_of(env_id)`.

- The built-in games (Connect Four, Othello, Hex) are drawn from their planes with their
  coordinates, OpenSpiel's: a column letter from `a`, then (Othello, Hex) a row number from 1
  at the top; player 0's stones are `x`, player 1's `o`. A move is typed as OpenSpiel writes
  it: a column (`d`, or its number `4`) at Connect Four, a cell (`d3`) at Othello and Hex,
  `pass` at Othello when it is the only move.
- A game whose registration names its OpenSpiel twin (`register(..., openspiel=...)`, a
  user's Breakthrough) is drawn and named by OpenSpiel itself: a twin position follows every
  move, the board is its `str()`, a move its `action_to_string` ("a5b4", a capture "a5b4*",
  which may be typed without the `*`).
- Any other game (no twin, or OpenSpiel not installed): the board from its planes where its
  observation has them (the mover's stones, then the other player's), or the player to move
  alone; moves by their action numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from components.envs.engine.catalogue import openspiel_name, spec

STONES = {0: "x", 1: "o", -1: "."}
OTHELLO_PASS = 64


def board_cells(planes: np.ndarray, mover: int) -> np.ndarray:
    """The board as int[rows, columns]: 0 or 1 (whose stone), -1 empty, from the planes of
    one game (`[rows, columns, planes]`, plane 0 the stones of `mover`, plane 1 the other
    player's)."""
    cells = np.full(planes.shape[:2], -1, np.int64)
    cells[planes[..., 0] > 0.5] = mover
    cells[planes[..., 1] > 0.5] = 1 - mover
    return cells


def board_text(env_id: str, cells: np.ndarray) -> str:
    """The board with its coordinates: column letters above and below, row numbers on both
    sides (not at Connect Four, whose moves name columns only), Hex's rows shifted right one
    space each as its cells are."""
    rows, columns = cells.shape
    letters = " ".join(chr(ord("a") + c) for c in range(columns))
    numbered = env_id != "ConnectFour-v0"
    width = len(str(rows)) if numbered else 0
    lines = [" " * (width + 1) + letters]
    for r in range(rows):
        shift = " " * r if env_id == "Hex-v0" else ""
        label = f"{r + 1:>{width}}" if numbered else ""
        stones = " ".join(STONES[int(v)] for v in cells[r])
        lines.append(f"{shift}{label} {stones} {label}".rstrip())
    lines.append(" " * (width + 1 + (rows - 1 if env_id == "Hex-v0" else 0)) + letters)
    return "\n".join(lines)


def board_planes(env_id: str) -> tuple[int, int, int]:
    """(rows, columns, planes) of a board game's observation (`EnvSpec.planes`); a ValueError
    for a game whose task declares no planes."""
    planes = spec(env_id).planes
    if planes is None:
        raise ValueError(f"{env_id}: its task declares no board (rows, columns and planes)")
    return planes


def move_text(env_id: str, action: int) -> str:
    """An action as a person types it (OpenSpiel's spelling)."""
    if env_id == "ConnectFour-v0":
        return chr(ord("a") + action)
    if env_id == "Othello-v0" and action == OTHELLO_PASS:
        return "pass"
    columns = board_planes(env_id)[1]
    return f"{chr(ord('a') + action % columns)}{action // columns + 1}"


def number(text: str) -> int | None:
    """`text` as a non-negative int when it is ASCII digits only ("²" and "١" are digits to
    `str.isdigit` but no move number), else None."""
    return int(text) if text.isascii() and text.isdigit() else None


def parse_move(env_id: str, text: str, legal: np.ndarray) -> int:
    """The action a person typed; a ValueError saying why it is not a legal move here."""
    text = text.strip().lower()
    rows, columns, _ = board_planes(env_id)
    if env_id == "ConnectFour-v0":
        if len(text) == 1 and "a" <= text <= chr(ord("a") + columns - 1):
            action = ord(text) - ord("a")
        elif number(text) is not None and 1 <= number(text) <= columns:
            action = number(text) - 1
        else:
            raise ValueError(f"{text!r} is not a column: type a letter a-"
                             f"{chr(ord('a') + columns - 1)} (or 1-{columns})")
    elif env_id == "Othello-v0" and text == "pass":
        action = OTHELLO_PASS
    else:
        column, row = text[:1], text[1:]
        if not ("a" <= column <= chr(ord("a") + columns - 1) and number(row) is not None
                and 1 <= number(row) <= rows):
            raise ValueError(f"{text!r} is not a cell: type a column a-"
                             f"{chr(ord('a') + columns - 1)} and a row 1-{rows}, e.g. d3")
        action = (int(row) - 1) * columns + ord(column) - ord("a")
    if not legal[action]:
        raise ValueError(f"{move_text(env_id, action)} is not a legal move here")
    return action




class Notation:
    """How one game is written for a person: the board, a move's name, the move a person
    typed. `played(action)` follows each move made (both sides'), for a notation that keeps
    its own copy of the position."""

    def side(self, player: int) -> str:
        """Who `player` is on the board."""
        return f"player {player}"

    def board(self, planes: np.ndarray, mover: int) -> str:
        """The position as text, from its planes as the player `mover` sees them."""
        raise NotImplementedError

    def move(self, action: int) -> str:
        """`action` in the current position, as a person types it."""
        raise NotImplementedError

    def parse(self, text: str, legal: np.ndarray) -> int:
        """The action a person typed; a ValueError saying why it is not a legal move here."""
        raise NotImplementedError

    def played(self, action: int) -> None:
        """`action` was made in the current position (by either side)."""


class BuiltInNotation(Notation):
    """The built-in games' boards and moves (`board_text`, `move_text`, `parse_move`)."""

    GAMES = ("ConnectFour-v0", "Othello-v0", "Hex-v0")

    def __init__(self, env_id: str):
        self.env_id = env_id

    def side(self, player: int) -> str:
        """Who `player` is on the board."""
        return f"{STONES[player]} (player {player})"

    def board(self, planes: np.ndarray, mover: int) -> str:
        """The position as text."""
        return board_text(self.env_id, board_cells(planes, mover))

    def move(self, action: int) -> str:
        """`action` as a person types it."""
        return move_text(self.env_id, action)

    def parse(self, text: str, legal: np.ndarray) -> int:
        """The action a person typed; a ValueError saying why it is not a legal move."""
        return parse_move(self.env_id, text, legal)


class OpenSpielNotation(Notation):
    """A game written as OpenSpiel writes its twin (`game`, a `pyspiel.Game`), whose position
    follows every move (`played`)."""

    def __init__(self, game: Any):
        self.state = game.new_initial_state()

    def board(self, planes: np.ndarray, mover: int) -> str:
        """The position as text."""
        return str(self.state).rstrip("\n")

    def move(self, action: int) -> str:
        """`action` as a person types it."""
        return self.state.action_to_string(self.state.current_player(), int(action))

    def parse(self, text: str, legal: np.ndarray) -> int:
        """The action a person typed; a ValueError saying why it is not a legal move."""
        typed = text.strip().lower()
        names = {self.move(a).lower(): int(a) for a in np.flatnonzero(legal)}
        if typed in names:
            return names[typed]
        if number(typed) is not None:  # a move's number is always taken
            if number(typed) < legal.shape[0] and legal[number(typed)]:
                return number(typed)
            raise ValueError(f"{typed} is not the number of a legal move here (those listed are "
                             f"{', '.join(map(str, np.flatnonzero(legal)))})")
        loose = [a for name, a in names.items() if name.rstrip("*") == typed.rstrip("*")]
        if typed and len(loose) == 1:
            return loose[0]
        starred = " (a capture's * may be left out)" if any(
            name.endswith("*") for name in names) else ""
        raise ValueError(f"{text.strip()!r} is not a legal move here: type one of those listed"
                         f"{starred}, or its number")

    def played(self, action: int) -> None:
        """Follow `action` in the copy of the position."""
        self.state.apply_action(int(action))


class NumberNotation(Notation):
    """A game known by its task alone: the board from its planes (x the player 0's stones, o
    player 1's) where its observation has planes, moves by number."""

    def __init__(self, env_id: str):
        made = spec(env_id)
        self.planes = len(made.observation_space.shape) == 3 and made.planes is not None \
            and made.planes[2] >= 2

    def side(self, player: int) -> str:
        """Who `player` is on the board."""
        return f"{STONES[player]} (player {player})" if self.planes else f"player {player}"

    def board(self, planes: np.ndarray, mover: int) -> str:
        """The position as text."""
        if not self.planes:
            return f"player {mover} to move"
        cells = board_cells(np.asarray(planes), mover)
        return "\n".join(" ".join(STONES[int(v)] for v in row) for row in cells)

    def move(self, action: int) -> str:
        """`action` as a person types it."""
        return str(int(action))

    def parse(self, text: str, legal: np.ndarray) -> int:
        """The action a person typed; a ValueError saying why it is not a legal move."""
        text = text.strip()
        if number(text) is None or number(text) >= legal.shape[0]:
            raise ValueError(f"{text!r} is not a move: type an action number 0-"
                             f"{legal.shape[0] - 1}")
        if not legal[number(text)]:
            raise ValueError(f"{number(text)} is not a legal move here")
        return number(text)


def notation_of(env_id: str) -> Notation:
    """The notation of a game (see the module docstring), a new one for each game played."""
    if env_id in BuiltInNotation.GAMES:
        return BuiltInNotation(env_id)
    twin = openspiel_name(env_id)
    if twin is not None:
        try:
            import pyspiel
        except ImportError:
            return NumberNotation(env_id)
        return OpenSpielNotation(pyspiel.load_game(twin))
    return NumberNotation(env_id)


__all__ = ["BuiltInNotation", "Notation", "NumberNotation", "OpenSpielNotation", "board_cells",
           "board_planes",
           "board_text", "move_text", "notation_of", "parse_move"]
