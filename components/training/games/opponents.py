"""Opponents nobody here wrote, for `metagraph evaluate RUN --opponent SPEC`: OpenSpiel's bots
over OpenSpiel's own game (the `games` extra, `pip install -e ".[games]"`).

SPEC is `random` (a uniformly random legal move: `pyspiel.make_uniform_random_bot`),
`mcts:N` (`pyspiel.MCTSBot`: UCT with c = 2, N simulations per move, each leaf valued by one
random rollout, `pyspiel.RandomRolloutEvaluator`; no solver, as in OpenSpiel's examples), or
`run:DIR`, another trained run of the same game (its `Algorithm.game_player`, sampling when
the agent does: `--stochastic`, else two greedy agents play the same game over and over): the
agents' round-robin.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from metagraph.install_hints import install_hint

OPPONENTS = ("random", "mcts:N", "run:DIR")
UCT_C = 2.0
MAX_SIMULATIONS = 1_000_000
"""The most simulations a move for `mcts:N` (a million is minutes a move already)."""


class OpponentError(ValueError):
    """An `--opponent` that names no opponent; the message names the option."""


@dataclasses.dataclass(frozen=True)
class Opponent:
    """An opponent by its spec: `kind` "random", "mcts" or "run", `simulations` (mcts),
    `run` (the run directory)."""

    kind: str
    simulations: int = 0
    run: str = ""

    @property
    def spec(self) -> str:
        """The spec it was parsed from (`random`, `mcts:N`, `run:DIR`)."""
        if self.kind == "run":
            return f"run:{self.run}"
        return self.kind if self.kind == "random" else f"mcts:{self.simulations}"

    def bot(self, game: Any, player: int, seed: int) -> Any:
        """An OpenSpiel bot of this kind playing `player` at the pyspiel `game` (not for
        a run, which plays through its own `GamePlayer`)."""
        import pyspiel

        if self.kind == "random":
            return pyspiel.make_uniform_random_bot(player, seed)
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        return pyspiel.MCTSBot(game, evaluator, UCT_C, self.simulations, 1000, False, seed,
                               False)


def parse_opponent(spec: str) -> Opponent:
    """The `Opponent` of `--opponent SPEC` (see the module docstring); `OpponentError`
    naming the option otherwise."""
    expected = (f"expected {', '.join(OPPONENTS)} (N simulations per move, an int >= 1; DIR "
                f"a run directory)")
    if spec == "random":
        return Opponent("random")
    kind, sep, count = spec.partition(":")
    if kind == "run" and count:
        return Opponent("run", run=count)
    if kind != "mcts" or not sep:
        raise OpponentError(f"--opponent: unknown opponent {spec!r}; {expected}")
    simulations = int(count) if count.isascii() and count.isdigit() else 0
    if not 1 <= simulations <= MAX_SIMULATIONS or str(simulations) != count:
        raise OpponentError(f"--opponent {spec}: the simulation count must be an int in "
                            f"[1, {MAX_SIMULATIONS:,}] written as digits alone, got {count!r}; "
                            f"{expected}")
    return Opponent("mcts", simulations)


def require_openspiel() -> Any:
    """`pyspiel`, or an `OpponentError` saying how to install it."""
    try:
        import pyspiel
    except ImportError:
        raise OpponentError(f"--opponent needs OpenSpiel (`{install_hint('games')}`, the "
                            "open-spiel wheel)") from None
    return pyspiel


__all__ = ["OPPONENTS", "Opponent", "OpponentError", "parse_opponent", "require_openspiel"]
