"""`metagraph play RUN`: a person plays a trained agent at its game in the terminal.

The board is drawn after every move, and a move is typed, in the game's notation
(`notation.py`: OpenSpiel's coordinates for the built-in games, OpenSpiel's own drawing and
move names for a user's game with an OpenSpiel twin, action numbers otherwise). The legal
moves are listed at every prompt; anything else is refused with a message, and the prompt
repeats.
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

from components.envs.engine.catalogue import num_players
from components.envs.games.self_play import SelfPlay
from components.training.algorithm import env_kwargs_of
from components.training.games.notation import Notation, notation_of


class PlayError(ValueError):
    """A run that cannot be played (its environment is not a game)."""


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
    games = SelfPlay(env_id, num_threads=1, env_kwargs=env_kwargs_of(agent.config))
    notation = notation_of(env_id)
    key = jax.random.PRNGKey(seed)
    state = games.init(key, 1)
    write(f"{env_id}: you are {notation.side(human)}, moving "
          f"{'first' if human == 0 else 'second'}; the agent is {notation.side(1 - human)}.")
    while True:
        mover = int(state.current_player[0])
        write(notation.board(np.asarray(state.observation[0]), mover))
        legal = np.asarray(state.legal_action_mask[0])
        if mover == human:
            action = ask_move(notation, legal, read, write)
        else:
            key, search = jax.random.split(key)
            action = int(np.asarray(player(state, search))[0])
            write(f"the agent plays {notation.move(action)}")
        notation.played(action)
        state, final = games.step_with_final_observation(state, jnp.asarray([action],
                                                                            jnp.int32))
        if bool(state.terminated[0]):
            write(notation.board(np.asarray(final[0]), 1 - mover))
            rewards = np.asarray(state.rewards)[0]
            if not np.isfinite(rewards).all():
                raise PlayError(f"metagraph play: {env_id} ended with the rewards "
                                f"{rewards.tolist()}: a game's rewards must be finite")
            result = float(rewards[human])
            write("You win." if result > 0 else "The agent wins." if result < 0 else "A draw.")
            return result


def ask_move(notation: Notation, legal: np.ndarray, read: Callable[[str], str],
             write: Callable[[str], None]) -> int:
    """The person's move, asked until it is a legal one."""
    moves = " ".join(notation.move(int(a)) for a in np.flatnonzero(legal))
    while True:
        try:
            return notation.parse(read(f"your move ({moves}): "), legal)
        except ValueError as error:
            write(str(error))


__all__ = ["PlayError", "ask_move", "play_game", "read_line"]
