"""`PolicySearch`: a game's moves chosen by Gumbel MuZero's search (`GameSearch`, mctx) whose
prior is a policy's logits and whose values are random playouts' outcomes: the moves of path
reweighting's search-improved paths (`ReweightConfig.search_simulations`; Anthony et al.
2017's expert iteration, with the paths then reweighted by their outcome). The policy has no
value: the search's root value is 0 and every position it expands is valued by `rollouts`
native random playouts alone (AlphaGo's lambda 1)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from components.envs.games.self_play import SelfPlay
from components.search import GameSearch


class PolicySearch:
    """Searched moves for a batch of games stepped by `env` (see the module docstring).

    Args:
        agent: the agent's name, for errors.
        env_id: the game.
        env: the games' `Environment` on the native door (its `env_state()` is where each
            search starts).
        policy: the prior, a `Policy` (a `MaskedPolicy`) whose `torso` and `action_head` are
            networks with `forward_with` and `current_params` (`HaikuNetwork`s).
        simulations: simulations a search.
        rollouts: random playouts valuing each position the search expands (>= 1).
        max_considered_actions: actions sequential halving considers at the root.
        env_kwargs: the game's keyword arguments (the run's), under which the search plays.

    Raises:
        TypeError: `env` has no in-graph state, or `policy` no torso and action head the
            search can evaluate with given parameters.
        ValueError: `rollouts` is below 1 (the playouts are the search's only values).
    """

    def __init__(self, agent: str, env_id: str, env: mg.Component, policy: mg.Component,
                 simulations: int, rollouts: int, max_considered_actions: int = 16,
                 env_kwargs: dict[str, Any] | None = None):
        if not callable(getattr(env, "env_state", None)):
            raise TypeError(f"{agent}: search_simulations > 0 searches from the games' "
                            f"in-graph state; env {type(env).__name__} has no env_state() "
                            f"(Environment's, on the native door)")
        parts = [getattr(policy, name, None) for name in ("torso", "action_head")]
        if not all(callable(getattr(part, "forward_with", None)) for part in parts):
            raise TypeError(f"{agent}: search_simulations > 0 evaluates the policy inside the "
                            f"search; policy {type(policy).__name__} has no torso and "
                            f"action_head networks with forward_with (a Policy's)")
        if rollouts < 1:
            raise ValueError(f"{agent}: search_simulations > 0 values positions by random "
                             f"playouts (the policy has no value); search_rollouts must be "
                             f">= 1, got {rollouts}")
        self.env, self.policy, self.simulations = env, policy, simulations
        self.games = SelfPlay.of(env, env_id, env_kwargs or {})
        self.search = GameSearch(self.games, self._evaluate, max_considered_actions, rollouts,
                                 rollout_weight=1.0)

    def _evaluate(self, params: Any, planes: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The policy's logits of `planes` [B, rows, columns, planes] with `params` (torso's,
        head's), and a value of 0."""
        torso, head = params
        features = self.policy.torso.forward_with(torso, planes.reshape(planes.shape[0], -1))
        return (self.policy.action_head.forward_with(head, features),
                jnp.zeros(planes.shape[:1], jnp.float32))

    def moves(self, observation: dict, key: jax.Array, to_move: jax.Array) -> jax.Array:
        """The searched move, int32[n], of every game at the env's current positions, from
        the games' observations {"obs": flat planes [n, d], "legal": [n, actions]} and each
        game's player to move [n]."""
        flat = observation["obs"]
        torso = self.policy.torso.current_params(flat)
        head = self.policy.action_head.current_params(
            self.policy.torso.forward_with(torso, flat))
        planes = flat.reshape(flat.shape[:-1] + self.games.observation_shape).astype(
            jnp.float32)
        out = self.search.search((torso, head), key, self.env.env_state(), planes,
                                 observation["legal"].astype(bool), self.simulations,
                                 to_move=to_move)
        return out.action.astype(jnp.int32)
