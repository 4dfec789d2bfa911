"""`metagraph play RUN`: a person plays a trained agent at its game in the terminal.

The board is drawn after every move with its coordinates, OpenSpiel's: a column letter from
`a`, then (Othello, Hex) a row number from 1 at the top; player 0's stones are `x`, player 1's
`o`. A move is typed as OpenSpiel writes it: a column (`d`, or its number `4`) at Connect Four,
a cell (`d3`) at Othello and Hex, `pass` at Othello when it is the only move. The legal moves
are listed at every prompt; anything else is refused with a message, and the prompt repeats.
The agent moves through its algorithm's `GamePlayer` (`game_player.py`): its deterministic
policy, or its search (AlphaZero). The game is played by the native engine's in-graph door
(`SelfPlay`), as in training.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine.catalogue import num_players, observation_shape
from components.envs.games.self_play import SelfPlay

STONES = {0: "x", 1: "o", -1: "."}
OTHELLO_PASS = 64


class PlayError(ValueError):
    """A run that cannot be played (its environment is not a game)."""


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


def move_text(env_id: str, action: int) -> str:
    """An action as a person types it (OpenSpiel's spelling)."""
    if env_id == "ConnectFour-v0":
        return chr(ord("a") + action)
    if env_id == "Othello-v0" and action == OTHELLO_PASS:
        return "pass"
    columns = observation_shape(env_id)[1]
    return f"{chr(ord('a') + action % columns)}{action // columns + 1}"


def parse_move(env_id: str, text: str, legal: np.ndarray) -> int:
    """The action a person typed; a ValueError saying why it is not a legal move here."""
    text = text.strip().lower()
    rows, columns, _ = observation_shape(env_id)
    if env_id == "ConnectFour-v0":
        if len(text) == 1 and "a" <= text <= chr(ord("a") + columns - 1):
            action = ord(text) - ord("a")
        elif text.isdigit() and 1 <= int(text) <= columns:
            action = int(text) - 1
        else:
            raise ValueError(f"{text!r} is not a column: type a letter a-"
                             f"{chr(ord('a') + columns - 1)} (or 1-{columns})")
    elif env_id == "Othello-v0" and text == "pass":
        action = OTHELLO_PASS
    else:
        column, row = text[:1], text[1:]
        if not ("a" <= column <= chr(ord("a") + columns - 1) and row.isdigit()
                and 1 <= int(row) <= rows):
            raise ValueError(f"{text!r} is not a cell: type a column a-"
                             f"{chr(ord('a') + columns - 1)} and a row 1-{rows}, e.g. d3")
        action = (int(row) - 1) * columns + ord(column) - ord("a")
    if not legal[action]:
        raise ValueError(f"{move_text(env_id, action)} is not a legal move here")
    return action


class _LineReader:
    """Standard input's lines, read on a daemon thread one at a time as asked for, while the
    main thread waits in short steps: a Ctrl-C then stops the game at once even when the
    kernel hands SIGINT to one of XLA's threads (Python's handler only sets a flag there, and
    a main thread blocked reading the terminal would not see it until the next line)."""

    def __init__(self) -> None:
        self._asked: queue.Queue = queue.Queue()
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, name="metagraph-play-input", daemon=True).start()

    def _read(self) -> None:
        while True:
            self._asked.get()
            try:
                self._lines.put(sys.stdin.readline())
            except BaseException as error:  # noqa: BLE001 - handed to the asking thread
                self._lines.put(error)

    def line(self) -> str:
        """The next line of standard input, as `readline` gives it ("" at its end)."""
        self._asked.put(None)
        while True:
            try:
                got = self._lines.get(timeout=0.1)
            except queue.Empty:
                continue  # (back in Python: a pending Ctrl-C is raised here)
            if isinstance(got, BaseException):
                raise got
            return got


_reader: _LineReader | None = None


def read_line(prompt: str) -> str:
    """`prompt`, then one line of standard input without its newline. EOFError when the input
    ends, also in the middle of a line (a terminal's ^D after some characters, a file without
    a last newline): Python's `input()` would wait there for more. A Ctrl-C while it waits
    raises KeyboardInterrupt at once."""
    global _reader
    sys.stdout.write(prompt)
    sys.stdout.flush()
    if _reader is None:
        _reader = _LineReader()
    line = _reader.line()
    if not line.endswith("\n"):
        raise EOFError
    return line[:-1]


def play_game(agent: Any, human: int = 0, read: Callable[[str], str] = read_line,
              write: Callable[[str], None] = print, seed: int = 0) -> float:
    """One game of the person (`read` for their moves, `write` for the board and messages)
    against the trained agent of `components.training.load`, the person playing player
    `human` (0 moves first). Returns the person's result: 1 won, 0 draw, -1 lost.

    Raises:
        PlayError: the run's environment is not a game.
        EOFError: the input ended before the game did (from `read`).
    """
    env_id = agent.env_id.removeprefix("metagraph/")
    if num_players(env_id) < 2:
        raise PlayError(f"metagraph play: {agent.env_id} is not a game (its task declares no "
                        f"num_players())")
    player = agent.algorithm.game_player(agent, True)
    games = SelfPlay(env_id, num_threads=1)
    key = jax.random.PRNGKey(seed)
    state = games.init(key, 1)
    write(f"{env_id}: you are {STONES[human]} (player {human}, moving "
          f"{'first' if human == 0 else 'second'}); the agent is {STONES[1 - human]}.")
    while True:
        mover = int(state.current_player[0])
        write(board_text(env_id, board_cells(np.asarray(state.observation[0]), mover)))
        legal = np.asarray(state.legal_action_mask[0])
        if mover == human:
            action = ask_move(env_id, legal, read, write)
        else:
            key, search = jax.random.split(key)
            action = int(np.asarray(player(state, search))[0])
            write(f"the agent plays {move_text(env_id, action)}")
        state, final = games.step_with_final_observation(state, jnp.asarray([action],
                                                                            jnp.int32))
        if bool(state.terminated[0]):
            write(board_text(env_id, board_cells(np.asarray(final[0]), 1 - mover)))
            result = float(np.asarray(state.rewards)[0, human])
            write({1.0: "You win.", -1.0: "The agent wins.", 0.0: "A draw."}[result])
            return result


def ask_move(env_id: str, legal: np.ndarray, read: Callable[[str], str],
             write: Callable[[str], None]) -> int:
    """The person's move, asked until it is a legal one."""
    moves = " ".join(move_text(env_id, int(a)) for a in np.flatnonzero(legal))
    while True:
        try:
            return parse_move(env_id, read(f"your move ({moves}): "), legal)
        except ValueError as error:
            write(str(error))


__all__ = ["PlayError", "board_cells", "board_text", "move_text", "parse_move", "play_game",
           "read_line"]
