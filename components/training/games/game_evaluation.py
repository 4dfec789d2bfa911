"""`evaluate_games`: a trained agent against an opponent nobody here wrote, at its game
(`metagraph evaluate RUN --opponent random|mcts:N`).

The agent plays through its algorithm's `GamePlayer` (`Algorithm.game_player`,
`components.training.game_player`) on a batch of native games (`SelfPlay`, the in-graph
door); the opponent is an OpenSpiel bot (`opponents.py`) on OpenSpiel's own game. Every move,
whoever made it, is applied to both, and after every move the two must agree on the player
to move, the legal actions, whether the game is over and its returns (a free check of the
native rules against OpenSpiel's; `GameSyncError` otherwise). The agent is the first player
in half the games (even game indices) and the second in the other half. The result counts
wins, draws and losses from the agent's side, with the Wilson 95% interval of its win rate
(draws count as not won) and of its score (a draw half a win). A user's game has its OpenSpiel
twin where its registration names one (`register(..., openspiel="breakthrough(rows=6,
columns=6)")`); a game with none plays `random` (NumPy's draw among the legal moves) and
`run:DIR` by its native rules alone.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

from components.envs.engine.catalogue import num_players, openspiel_name
from components.envs.games.self_play import SelfPlay
from components.training.algorithm import env_kwargs_of
from components.training.game_player import GamePlayer
from components.training.games.intervals import wilson_interval
from components.training.games.opponents import (
    Opponent,
    OpponentError,
    parse_opponent,
    require_openspiel,
)


class GameSyncError(RuntimeError):
    """The native game and OpenSpiel's disagree after a move (a rules bug), or the agent
    chose an illegal move; the message names the game, its moves and what differs."""


MAX_GAMES = 100_000
"""The most games one `evaluate --opponent` plays (every game's state is held at once)."""
BOT_SEED_LIMIT = 2**31
"""OpenSpiel's bots take their seed as a C int."""


def evaluate_games(out: Any, opponent: str | Opponent, games: int = 200, seed: int = 12345,
                   algo: Any = None, trust_code: bool = False, deterministic: bool = True
                   ) -> dict[str, Any]:
    """Play the trained agent of run directory `out` (or a `TrainedAgent`) `games` games
    against `opponent` ("random", "mcts:N" or an `Opponent`); see the module docstring.
    Returns {"opponent", "games", "wins", "draws", "losses", "win_rate", "win_rate_95",
    "score", "score_95", "as_first": [w, d, l], "as_second": [w, d, l], "seconds",
    "agent_moves", "agent_seconds_per_move", "opponent_moves", "opponent_seconds_per_move"}:
    a side's seconds per move are the time it spent choosing moves over the moves it made
    (each of the agent's calls chooses a move in every game at once, on its opponent's turns
    and in finished games too, so its figure is an upper bound).

    Raises:
        OpponentError: a bad opponent spec, `games` odd or outside [2, MAX_GAMES], a seed
            outside the bots' range, a run whose environment is not a game, or no OpenSpiel.
    """
    from components.training.evaluation.loading import TrainedAgent, load

    spec = opponent if isinstance(opponent, Opponent) else parse_opponent(opponent)
    if not isinstance(games, int) or isinstance(games, bool) or not 2 <= games <= MAX_GAMES \
            or games % 2:
        raise OpponentError(f"--games must be an even int in [2, {MAX_GAMES:,}] (half the "
                            f"games as first player), got {games!r}")
    last = BOT_SEED_LIMIT - games  # OpenSpiel's bots take seeds seed ... seed + games - 1
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= last:
        raise OpponentError(f"--seed must be an int in [0, {last:,}] with --games {games} "
                            f"(the bots' seeds seed ... seed + {games - 1} are C ints), got "
                            f"{seed!r}")
    agent = out if isinstance(out, TrainedAgent) else load(out, algo, trust_code)
    if num_players(agent.env_id) < 2:
        raise OpponentError(f"--opponent: {agent.env_id} is not a game (its task declares no "
                            f"num_players()); evaluate it without --opponent")
    player = agent.algorithm.game_player(agent, deterministic)
    other = None
    if spec.kind == "run":  # another run of the same game, acting as the agent does
        rival = load(spec.run, None, trust_code)
        if rival.env_id != agent.env_id:
            raise OpponentError(f"--opponent {spec.spec}: that run plays {rival.env_id}, "
                                f"this one {agent.env_id}")
        other = rival.algorithm.game_player(rival, deterministic)
    return play_games(player, agent.env_id.removeprefix("metagraph/"), spec, games, seed,
                      other, env_kwargs_of(agent.config))


def play_games(player: GamePlayer, env_id: str, opponent: Opponent, games: int,
               seed: int = 12345, opponent_player: GamePlayer | None = None,
               env_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """`games` games of `player` (a `GamePlayer`) against `opponent` at `env_id`, the player
    first in the even-numbered games; the counts `evaluate_games` returns. With
    `opponent_player` (another agent's `GamePlayer`), that plays the opponent's moves
    instead of an OpenSpiel bot; OpenSpiel's game still checks every move. `env_kwargs`: the
    game's keyword arguments (the run's), under which its native rules play.

    A game with no OpenSpiel twin (`components.envs.openspiel_name`, from its registration) is
    refereed by its own rules alone: `random` is then a uniformly random legal move drawn with
    NumPy (game i seeded `seed + i`), `mcts:N` is refused (OpenSpiel's search plays OpenSpiel's
    game)."""
    twin = openspiel_name(env_id) if not env_kwargs else None  # OpenSpiel's: the defaults
    if twin is None and opponent.kind == "mcts":
        why = (f"is played with the keyword arguments {env_kwargs}, which OpenSpiel's game "
               f"has not" if env_kwargs else "has no OpenSpiel twin")
        raise OpponentError(f"--opponent {opponent.spec}: {env_id} {why}, whose game "
                            f"OpenSpiel's MCTS searches; use random or run:DIR")
    game = require_openspiel().load_game(twin) if twin is not None else None
    native = SelfPlay(env_id, num_threads=1, env_kwargs=env_kwargs or {})
    step = jax.jit(native.step)
    key = jax.random.PRNGKey(seed)
    key, init_key = jax.random.split(key)
    state = native.init(init_key, games)
    side = np.arange(games) % 2  # the agent's player in each game
    references = [game.new_initial_state() if game else None for _ in range(games)]
    bots = None if opponent_player is not None else [
        opponent.bot(game, 1 - int(side[i]), seed + i) if game
        else _UniformRandom(np.random.default_rng(seed + i)) for i in range(games)]
    moves: list[list[int]] = [[] for _ in range(games)]
    outcome = np.full(games, np.nan)  # the agent's return, once its game is over
    started = time.perf_counter()
    thinking = {"agent": 0.0, "opponent": 0.0}  # seconds spent choosing moves, each side
    made = {"agent": 0, "opponent": 0}  # moves each side made
    while np.isnan(outcome).any():
        key, act_key, rival_key = jax.random.split(key, 3)
        before = time.perf_counter()
        chosen = np.asarray(player(state, act_key))  # every game's move in one call
        thinking["agent"] += time.perf_counter() - before
        before = time.perf_counter()
        rival = None if opponent_player is None else np.asarray(
            opponent_player(state, rival_key))
        thinking["opponent"] += time.perf_counter() - before
        mask = np.asarray(state.legal_action_mask)
        current = np.asarray(state.current_player)
        actions = np.zeros(games, np.int32)
        for i, reference in enumerate(references):
            if not np.isnan(outcome[i]):  # over: any legal move keeps the batch stepping
                actions[i] = int(np.flatnonzero(mask[i])[0])
                continue
            if reference is not None:
                _agree(i, env_id, moves[i], reference, mask[i], int(current[i]))
            if current[i] == side[i] or rival is not None:
                who = "agent" if current[i] == side[i] else "opponent"
                action = int(chosen[i] if who == "agent" else rival[i])
                if not (0 <= action < mask.shape[1] and mask[i, action]):
                    raise GameSyncError(f"{env_id} game {i}: the {who} chose the illegal "
                                        f"move {action} after moves {moves[i]} (legal: "
                                        f"{np.flatnonzero(mask[i]).tolist()})")
            else:
                who = "opponent"
                before = time.perf_counter()
                action = int(bots[i].step(reference) if reference is not None
                             else bots[i].choose(mask[i]))
                thinking["opponent"] += time.perf_counter() - before
            made[who] += 1
            actions[i] = action
            moves[i].append(action)
            if reference is not None:
                reference.apply_action(action)
        state = step(state, actions)
        ended = np.asarray(state.terminated)
        rewards = np.asarray(state.rewards)
        for i, reference in enumerate(references):
            if not np.isnan(outcome[i]):
                continue
            if ended[i] and not np.isfinite(rewards[i]).all():
                raise ValueError(f"{env_id} game {i} ended after moves {moves[i]} with the "
                                 f"rewards {rewards[i].tolist()}: a game's rewards must be "
                                 f"finite (its task's reward for each player)")
            if reference is None:  # the native rules alone
                if ended[i]:
                    outcome[i] = rewards[i, side[i]]
                continue
            if bool(ended[i]) != reference.is_terminal():
                raise GameSyncError(f"{env_id} game {i} after moves {moves[i]}: native "
                                    f"{'ended' if ended[i] else 'goes on'}, OpenSpiel's "
                                    f"{'ended' if reference.is_terminal() else 'goes on'}")
            if ended[i]:
                returns = np.asarray(reference.returns(), np.float32)
                if not np.array_equal(rewards[i], returns):
                    raise GameSyncError(f"{env_id} game {i} after moves {moves[i]}: native "
                                        f"returns {rewards[i].tolist()}, OpenSpiel's "
                                        f"{returns.tolist()}")
                outcome[i] = rewards[i, side[i]]
    result = summarise(outcome, side, opponent.spec, time.perf_counter() - started)
    for who in ("agent", "opponent"):  # what one move cost each side (the agent's calls
        result[f"{who}_moves"] = made[who]  # choose every game's move at once)
        result[f"{who}_seconds_per_move"] = round(thinking[who] / max(made[who], 1), 6)
    return result


class _UniformRandom:
    """A uniformly random legal move, for a game with no OpenSpiel twin."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def choose(self, mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(mask)))


def _agree(i: int, env_id: str, moves: list[int], reference: Any, mask: np.ndarray,
           current: int) -> None:
    """GameSyncError unless the native position and OpenSpiel's have the same player to move
    and legal actions."""
    legal = np.flatnonzero(mask).tolist()
    if current != reference.current_player() or legal != sorted(reference.legal_actions()):
        theirs = sorted(reference.legal_actions())
        raise GameSyncError(f"{env_id} game {i} after moves {moves}: native player {current} "
                            f"to move with legal {legal}, OpenSpiel's player "
                            f"{reference.current_player()} with {theirs}")


def summarise(outcome: np.ndarray, side: np.ndarray, opponent: str, seconds: float
              ) -> dict[str, Any]:
    """Wins, draws and losses of the agent's returns `outcome` (+1, 0, -1 per game), with
    `side` its player in each game; Wilson 95% intervals of the win rate and the score."""
    def counts(where: np.ndarray) -> list[int]:
        o = outcome[where]
        return [int((o > 0).sum()), int((o == 0).sum()), int((o < 0).sum())]

    n = len(outcome)
    wins, draws, losses = counts(np.ones(n, bool))
    score = wins + 0.5 * draws
    return {"opponent": opponent, "games": n, "wins": wins, "draws": draws, "losses": losses,
            "win_rate": wins / n, "win_rate_95": list(wilson_interval(wins, n)),
            "score": score / n, "score_95": list(wilson_interval(score, n)),
            "as_first": counts(side == 0), "as_second": counts(side == 1),
            "seconds": round(seconds, 2)}


def describe(result: dict[str, Any], run: str | Path = "") -> str:
    """The result as the command prints it."""
    low, high = result["win_rate_95"]
    first, second = result["as_first"], result["as_second"]
    return (f"{run}{' ' if run else ''}vs {result['opponent']}: {result['games']} games, "
            f"{result['wins']} wins, {result['draws']} draws, {result['losses']} losses; "
            f"win rate {result['win_rate']:.1%} (95% Wilson interval {low:.1%} to {high:.1%}); "
            f"as first player {first[0]}/{first[1]}/{first[2]}, as second "
            f"{second[0]}/{second[1]}/{second[2]} (w/d/l); {result['seconds']:.1f} s"
            + (f"; per move: agent {result['agent_seconds_per_move'] * 1e3:.1f} ms, opponent "
               f"{result['opponent_seconds_per_move'] * 1e3:.1f} ms"
               if "agent_seconds_per_move" in result else ""))


__all__ = ["GameSyncError", "describe", "evaluate_games", "play_games", "summarise"]
