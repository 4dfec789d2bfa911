"""Path reweighting's `quality = "margin"` on random games, replayed in OpenSpiel: the shared
part of the tests that check each path's q against OpenSpiel's count of the margin."""

from collections.abc import Iterator
from typing import Any

import jax
import numpy as np


def margin_paths(env_id: str, openspiel_name: str) -> Iterator[tuple[int, float, Any, int]]:
    """(path, q, OpenSpiel's final state, the learner's player) for each of 8 random paths
    (explore = 1) that `ReweightAgent(env_id)` samples with `quality="margin"`, each path's
    moves replayed in OpenSpiel's `openspiel_name` to its end."""
    import pyspiel

    import metagraph as mg
    from backends import xla
    from components.agents.reweight_agent import ReweightAgent
    from components.agents.reweight_config import ReweightConfig
    from metagraph.spaces import PRNGKey

    config = ReweightConfig(num_envs=8, fit_paths=2, hidden=(8,), explore=1.0,
                            quality="margin")
    exe = xla.lower(mg.build(ReweightAgent(env_id, config), {"key": PRNGKey()},
                             apis=["sample_paths"]))
    out = exe.sample_paths(np.asarray(jax.random.PRNGKey(3)))
    game = pyspiel.load_game(openspiel_name)
    for path, (actions, q) in enumerate(zip(np.asarray(out["action"]),
                                            np.asarray(out["quality"]), strict=True)):
        state, side = game.new_initial_state(), path % 2  # the learner's player
        for action in actions:
            if state.is_terminal():
                break
            state.apply_action(int(action))
        assert state.is_terminal(), path
        yield path, float(q), state, side
