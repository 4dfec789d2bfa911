"""Which tasks an agent plays by self-play: one policy for every side, each position valued
from its mover's view and the next position's value negated (negamax), which holds for
two-player zero-sum games. A task of one player is played as usual; a game of three or more
players is refused, naming the agent."""

from __future__ import annotations

from components.envs.engine.catalogue import num_players, resolved_id


def plays_itself(agent: str, env_id: str) -> bool:
    """True for a two-player game, False for a task of one player; a ValueError naming
    `agent` for a game of more players."""
    players = num_players(env_id)
    if players > 2:
        raise ValueError(f"{agent}: {resolved_id(env_id.removeprefix('metagraph/'))} is a game "
                         f"of {players} players; one policy playing every side with the "
                         f"mover's value negated (self-play, AlphaZero) takes two-player "
                         f"zero-sum games")
    return players == 2
