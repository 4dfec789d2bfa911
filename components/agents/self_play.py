"""Which tasks an agent plays by self-play: one policy for every side, each position valued
from its mover's view and the next position's value negated where the opponent moves there
(negamax) and kept where the mover moves again, which holds for two-player zero-sum games. A
task of one player is played as usual; a game of three or more players, or one whose players'
rewards do not sum to zero, is refused, naming the agent."""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

import numpy as np

from components.envs.engine.actions import MUST_OFFER_A_MOVE
from components.envs.engine.catalogue import num_players, resolved_id

PROBE_GAMES, PROBE_STEPS = 8, 512
"""The random play `zero_sum_refusal` watches: PROBE_GAMES games, PROBE_STEPS moves each."""


def plays_itself(agent: str, env_id: str, env_kwargs: dict | None = None) -> bool:
    """True for a two-player zero-sum game, False for a task of one player; a ValueError
    naming `agent` for a game of more players, or one that is not zero-sum
    (`check_playable`)."""
    check_playable(agent, env_id, env_kwargs)
    return num_players(env_id) == 2


def check_playable(agent: str, env_id: str, env_kwargs: dict | None = None) -> None:
    """A ValueError naming `agent` where `env_id` is a game one policy cannot learn by
    playing itself: a game of more than two players, or one that is not zero-sum
    (`zero_sum_refusal`, under the run's `env_kwargs`). Tasks of one player and two-player
    zero-sum games pass."""
    players = num_players(env_id)
    name = resolved_id(env_id.removeprefix('metagraph/'))
    if players > 2:
        raise ValueError(f"{agent}: {name} is a game of {players} players; one policy playing "
                         f"every side with the mover's value negated (self-play, AlphaZero) "
                         f"takes two-player zero-sum games")
    if players == 2:
        refusal = zero_sum_refusal(env_id, json.dumps(env_kwargs or {}, sort_keys=True,
                                                      default=repr))
        if refusal:
            raise ValueError(f"{agent}: {name} {refusal}; one policy playing both sides with "
                             f"the opponent's value negated (self-play, AlphaZero) takes "
                             f"two-player zero-sum games")


@functools.lru_cache(maxsize=64)
def zero_sum_refusal(env_id: str, env_kwargs_json: str = "{}") -> str:
    """Why `env_id` (a two-player game, with the keyword arguments `env_kwargs_json`) is not
    zero-sum, "" where it looks so: PROBE_GAMES games of uniformly random legal moves on the
    host pool, PROBE_STEPS moves each, every step's rewards finite, "reward_player_0" +
    "reward_player_1" 0, the step's reward the mover's and the player to move 0 or 1. A
    probe, not a proof: a game whose rewards stray only in positions random play does not
    reach passes it."""
    from components.envs.engine.make import make

    pool = make(env_id, PROBE_GAMES, seed=0, num_threads=1, **json.loads(env_kwargs_json))
    rng = np.random.default_rng(0)
    try:
        pool.reset()
        mover = np.zeros(PROBE_GAMES, np.int64)
        for _ in range(PROBE_STEPS):
            legal = pool.legal_mask()
            if not legal.any(axis=1).all():  # (every game goes on: the pool auto-resets)
                return (f"reaches a position that offers no legal move, though the game "
                        f"goes on: {MUST_OFFER_A_MOVE}")
            actions = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
            _, reward, terminated, truncated, info = pool.step(actions)
            first, second = info["reward_player_0"], info["reward_player_1"]
            finite = np.isfinite(first) & np.isfinite(second) & np.isfinite(reward)
            if not finite.all():
                k = int(np.flatnonzero(~finite)[0])
                return (f"gives a reward that is not a finite number (player 0 {first[k]:g}, "
                        f"player 1 {second[k]:g}, the step's {reward[k]:g}); a game's "
                        f"rewards must be finite")
            if np.any(first + second != 0):
                k = int(np.flatnonzero(first + second != 0)[0])
                return (f"is not zero-sum: a step gave player 0 {first[k]:g} and player 1 "
                        f"{second[k]:g}")
            own = np.where(mover == 0, first, second)
            if np.any(reward != own):
                k = int(np.flatnonzero(reward != own)[0])
                return (f"reports a step's reward {reward[k]:g} that is not its mover's "
                        f"(player {mover[k]}: {own[k]:g})")
            done = terminated | truncated
            to_move = info["player_to_move"]
            strays = ~done & ~np.isin(to_move, (0, 1))
            if strays.any():
                k = int(np.flatnonzero(strays)[0])
                return (f"reports player {to_move[k]:g} to move in a game going on; a "
                        f"two-player game's player to move is 0 or 1 (task.h)")
            mover = np.where(done, 0, to_move.astype(np.int64))
    finally:
        pool.close()
    return ""


def deprecated_self_play(agent: Any) -> bool:
    """`agent.self_play`, deprecated (PPOAgent's and ReweightAgent's): whether its task is a
    two-player game, with a DeprecationWarning (the agents have no switch for games now)."""
    warnings.warn(f"{type(agent).__name__}.self_play is deprecated: the agent has no switch "
                  f"for games; agent.rollout.num_players > 1 says whether its task is one",
                  DeprecationWarning, stacklevel=3)
    return agent.rollout.num_players > 1
