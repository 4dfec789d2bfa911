"""The player protocol of two-player games: how `metagraph evaluate RUN --opponent ...` (and
anything else that plays a trained agent at a game) gets moves from a run.

    player = agent.algorithm.game_player(agent)          # agent = load(RUN)
    actions = player(state, key)                         # state: a SelfPlay GameState batch

A `GamePlayer` is a function `(state, key) -> int32[n]`: `state` is a batch of `n` games as
`components.envs.games.self_play.GameState` gives them (`env_state`, the native in-graph
state a search can step from; `observation`, the planes from the view of the player to move;
`current_player`; `legal_action_mask`; ...), `key` a `jax.random` key (for sampling or
search), and the result one legal action per game for the player to move there. The caller
asks only for games that are not over, and checks every action it gets is legal.

`Algorithm.game_player(agent, deterministic)` returns one. Its default, `policy_player`,
serves the policy agents trained by self-play here (path reweighting, PPO): it feeds the
run's acting API (`greedy`, or `act` when `deterministic=False`) the games' observations by
name, {"obs": the planes flattened, "legal": the legal-action mask} (what the game's
`Environment` shows the agent while it trains), whose masked policy never picks an illegal
move; `greedy` is the argmax of the masked logits. A search agent (AlphaZero) overrides
`game_player` to search from `state.env_state`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from components.envs.games.self_play import GameState

GamePlayer = Callable[[GameState, jax.Array], Any]
"""`(state, key) -> int32[n]`: a legal action for the player to move in each of the n games
of `state` (see the module docstring)."""


def policy_player(agent: Any, deterministic: bool = True) -> GamePlayer:
    """The `GamePlayer` of a trained policy agent (`components.training.load`'s
    `TrainedAgent`): its acting API on the games' observations by name."""

    def play(state: GameState, key: jax.Array) -> np.ndarray:
        obs = game_observation(state)
        return np.asarray(agent.predict(obs, deterministic, key=None if deterministic
                                        else key), np.int32)

    return play


def game_observation(state: GameState) -> dict[str, np.ndarray]:
    """The games of `state` as the game's `Environment` observes them: {"obs": the mover's
    planes flattened, float32 [n, d]; "legal": its legal moves, bool [n, num_actions]}."""
    planes = np.asarray(state.observation, np.float32)
    mask = np.asarray(state.legal_action_mask)
    return {"obs": planes.reshape(mask.shape[0], -1), "legal": mask.astype(bool)}


__all__ = ["GamePlayer", "game_observation", "policy_player"]
