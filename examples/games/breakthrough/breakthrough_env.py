"""Breakthrough 6x6 on metagraph's environment engine, a game the library does not ship:
`breakthrough.h` is the game, this file its id, its spaces and its OpenSpiel twin. Importing it
builds the header (once; cached by its contents) and registers "Breakthrough6x6-v0", which then
plays itself everywhere a built-in game does:

    import breakthrough_env  # this file, from wherever it lives
    import components.envs as envs

    envs.num_players("Breakthrough6x6-v0")           # 2: its task says it is a game
    pool = envs.make("Breakthrough6x6-v0", 64)       # host pool, C++ threads, legal_mask()
    env = envs.Environment("Breakthrough6x6-v0", 8)  # observations {"obs", "legal"}

    metagraph train Breakthrough6x6-v0 --env-module breakthrough_env.py --algo alphazero ...
    metagraph evaluate RUN --opponent mcts:100      # OpenSpiel's search, on OpenSpiel's game
    metagraph play RUN                              # OpenSpiel's board and move names

docs/your-own-game.md walks through it.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium
import numpy as np

import components.envs as envs

HERE = os.path.dirname(os.path.abspath(__file__))
compiled = envs.build_extension(os.path.join(HERE, "breakthrough.h"),
                                "breakthrough::Breakthrough")


def make_spec(env_id: str, kwargs: dict[str, Any]) -> envs.EnvSpec:
    """The spec of Breakthrough 6x6 (it takes no keyword arguments: the task says so)."""
    task = compiled.Breakthrough(env_id, kwargs)
    observations = gymnasium.spaces.Box(0, 1, (6, 6, 3), np.bool_)
    return envs.EnvSpec(env_id, observations, gymnasium.spaces.Discrete(task.num_actions),
                        int(task.max_steps), task)


envs.register("Breakthrough6x6-v0", make_spec, openspiel="breakthrough(rows=6,columns=6)")
