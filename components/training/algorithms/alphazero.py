"""AlphaZero (`--algo alphazero`): the `AlphaZeroAgent` trained in fused iterations like PPO
and DQN (`IterativeAlgorithm`), on a two-player game (`metagraph train ConnectFour-v0 --algo
alphazero`). Playing a trained agent (`metagraph evaluate RUN --opponent ...`) searches from
each game's native state with the run's network (`game_player`)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import numpy as np

from components.agents.alphazero_agent import AlphaZeroAgent
from components.agents.alphazero_config import AlphaZeroConfig
from components.training.algorithms.iterative import IterativeAlgorithm
from components.training.game_player import GamePlayer, policy_player


class AlphaZero(IterativeAlgorithm):
    """AlphaZero with Gumbel MuZero's search (`AlphaZeroAgent`); its rows also report the
    `policy_loss` and `value_loss`. Override `agent` to give the agent other parts
    (`network=`, `loss=`, `optimizer=`)."""

    config_class = AlphaZeroConfig
    agent_class = AlphaZeroAgent
    acting_settings = ("eval_simulations", "eval_rollouts", "eval_rollout_weight",
                       "eval_max_considered_actions", "eval_prior_temperature")
    acting_apis = ("greedy",)  # the network's argmax; playing searches (game_player)

    def game_player(self, agent: Any, deterministic: bool = True) -> GamePlayer:
        """A player searching every move with `config.eval_simulations` simulations of the
        run's network (`GameSearch`) and `config.eval_rollouts` random playouts mixed into
        each expanded node's value with weight `config.eval_rollout_weight` (None: self-play's
        `rollout_weight`), `config.eval_max_considered_actions` at the root (None: self-play's)
        and the network's logits divided by `config.eval_prior_temperature`, without Gumbel
        noise when `deterministic`; with
        `config.eval_simulations` 0 the network alone, one forward pass a move, its most
        likely legal move (the `greedy` API, whatever `deterministic`). `agent` is a
        `TrainedAgent` (`load(RUN)`)."""
        if agent.config.eval_simulations == 0:
            return policy_player(agent, deterministic=True)
        root = agent.graph.root
        params = jax.device_put(agent.state[agent.graph.scope_of(root.network)]["params"])
        config = agent.config
        weight = config.rollout_weight if config.eval_rollout_weight is None \
            else config.eval_rollout_weight
        considered = config.max_considered_actions \
            if config.eval_max_considered_actions is None \
            else config.eval_max_considered_actions
        searcher = dataclasses.replace(root.search, rollouts=config.eval_rollouts,
                                       rollout_weight=weight,
                                       max_num_considered_actions=considered,
                                       prior_temperature=config.eval_prior_temperature)
        search = jax.jit(functools.partial(
            searcher, num_simulations=config.eval_simulations,
            gumbel_scale=0.0 if deterministic else 1.0))

        def play(state: Any, key: jax.Array) -> np.ndarray:
            return np.asarray(search(params, key, state).action, np.int32)

        return play
