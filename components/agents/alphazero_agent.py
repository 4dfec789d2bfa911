"""AlphaZero (Silver et al. 2018) with Gumbel MuZero's policy improvement (Danihelka et al.
2022) on the native two-player games, as a meta-graph. One executable runs
`iterations_per_call` iterations, each:

1. self-play: `num_steps` moves of `num_envs` games (a `Rollout` over the game's `Environment`),
   every move chosen by a search (`components.search.GameSearch`: `mctx`'s Gumbel MuZero, its
   model the native game stepped through the in-graph door, its evaluations the network), so
   search, game and network are one compiled program; with `explore` > 0 a move is, with
   that probability, a uniformly random legal one instead of the search's (the search's
   policy is still its position's target), so that self-play sees more varied positions;
2. the targets: the search's improved policy of every position, and the game's outcome for
   its mover (`losses.game_outcomes`, following the task's player to move: a player who
   moves again keeps the outcome's sign); positions whose game does not end within the
   iteration's moves are kept with weight 0 (not learnt from). With `search_value` = w > 0
   the value target is (1 - w) x the outcome + w x the search's root value, and a position
   whose game goes on is learnt too, its value target the search's value alone;
3. `updates_per_iteration` updates on batches drawn from a replay of (observation, search
   policy, outcome, weight): policy cross-entropy + value squared error + L2
   (`losses.AlphaZeroLoss`).

APIs: `start(key)` starts the games; `train(key, iterations)` runs the first `iterations` of
`iterations_per_call` iterations and returns their statistics; `greedy(observation)` the
network's most likely legal move (no search) of the games' observations ({"obs": the planes,
flat; "legal": the legal-action mask}). Playing a trained agent searches (`AlphaZero.game_player`).

Its parts can be swapped without subclassing (keyword arguments): the network, the loss and the
optimizer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

import metagraph as mg
from components.agents.alphazero_config import AlphaZeroConfig
from components.agents.iterations import IterativeAgent
from components.agents.parts import (
    LossPart,
    learning_rate,
    learnt_symmetries,
    make_env,
    make_loss,
    make_optimizer,
)
from components.agents.rollout import Rollout
from components.agents.self_play import plays_itself
from components.envs.engine.catalogue import resolved_id
from components.envs.engine.symmetry import transform
from components.envs.games.self_play import SelfPlay
from components.losses import AlphaZeroLoss, game_outcomes
from components.networks import PolicyValueNetwork
from components.policy import explore_legal
from components.replay import ReplayBuffer
from components.search import GameSearch
from metagraph.spaces import Box, Dict


class AlphaZeroAgent(IterativeAgent):
    """AlphaZero by self-play at a game (see the module docstring).

    Args:
        env_id: the game ("ConnectFour-v0", "Othello-v0", "Hex-v0", or OpenSpiel's name).
        config: the hyperparameters (`AlphaZeroConfig`).
        total_steps: the training's length in moves, for the learning rate's annealing
            (`config.anneal_lr`: linearly to 0 over the run's updates).
        name: the scope name (default "alpha_zero_agent").
        env: the environments (default `Environment(env_id, config.num_envs, door=config.door,
            **config.env_kwargs)`): any component with its `reset`/`step` APIs, `num_envs`
            and spaces (`components.agents.parts.make_env`), and `env_state()`: the games'
            in-graph state, which the search starts from.
        network: a component with `forward(planes) -> (logits, value)` and, for the search,
            `current_params(planes)` and `forward_with(params, planes)` (every `HaikuNetwork`
            has them). Default: `PolicyValueNetwork` from the config's torso and sizes.
        loss: a component with `loss(planes, target_policy, target_value, weight) -> (total,
            stats)`, or a function of the network returning one (default
            `AlphaZeroLoss(network, value_coef, l2)`).
        optimizer: an optax `GradientTransformation` (default Adam at
            `config.learning_rate`, annealed linearly to 0 when `config.anneal_lr`);
            gradients are clipped to `config.max_grad_norm` first.

    Raises:
        ValueError: `env_id` is not a two-player game.
    """

    def __init__(self, env_id: str, config: AlphaZeroConfig = AlphaZeroConfig(),
                 total_steps: int = 1_000_000, name: str | None = None, *,
                 env: mg.Component | None = None,
                 network: mg.Component | None = None, loss: LossPart = None,
                 optimizer: optax.GradientTransformation | None = None):
        super().__init__(name)
        env_id = resolved_id(env_id)  # OpenSpiel's names too
        if not plays_itself("AlphaZeroAgent", env_id, config.env_kwargs):
            raise ValueError(f"AlphaZeroAgent: {env_id!r} is not a game; AlphaZero plays a "
                             f"task that declares num_players() (ConnectFour-v0, Othello-v0, "
                             f"Hex-v0 or your own)")
        self.config = config
        env = make_env("AlphaZeroAgent", env, env_id, config, vectors=False)
        if not callable(getattr(env, "env_state", None)):
            raise TypeError(f"AlphaZeroAgent: env {type(env).__name__} has no env_state(): the "
                            f"search starts from the games' in-graph state (Environment's, on "
                            f"the native door)")
        self.rollout = Rollout(env)
        # the search steps the games through the environment's own door (the run's rules)
        self.games = games = SelfPlay.of(env, env_id, config.env_kwargs)
        self.num_actions = games.num_actions
        self.planes_shape = games.observation_shape
        self.network = network if network is not None else PolicyValueNetwork(
            self.num_actions, config.torso, config.hidden, config.channels, config.blocks)
        self.search = GameSearch(games, self.network.forward_with,
                                 config.max_considered_actions, config.rollouts,
                                 config.rollout_weight)
        self.symmetries = learnt_symmetries("AlphaZeroAgent", env, config.augment)
        planes = self.rollout.env.observation_space["obs"]  # what the network learns from
        self.replay = ReplayBuffer(config.buffer_size, Dict(
            obs=planes, policy=Box((self.num_actions,)), value=Box(()), weight=Box(())))
        self.loss = make_loss("AlphaZeroAgent", loss, self.network, network is not None,
                              lambda n: AlphaZeroLoss(n, config.value_coef, config.l2))
        updates = max(1, total_steps // self.steps_per_iteration(config)) \
            * config.updates_per_iteration
        self.optimizer = make_optimizer("AlphaZeroAgent", optimizer, self.loss, self.network,
                                        optax.adam(learning_rate(config, updates)),
                                        config.max_grad_norm)

    @staticmethod
    def steps_per_iteration(config: AlphaZeroConfig) -> int:
        """Moves per iteration: num_envs * num_steps."""
        return config.num_envs * config.num_steps

    def planes(self, observation: dict) -> tuple[jax.Array, jax.Array]:
        """(planes [..., rows, columns, planes], legal bool [..., num_actions]) of the games'
        observations {"obs": the task's [..., *shape], "legal": [..., num_actions]}."""
        return self.board(observation["obs"]), observation["legal"].astype(bool)

    def board(self, obs: jax.Array) -> jax.Array:
        """The task's observations [..., *shape] (its planes, or flat planes [..., d]) as
        [..., rows, columns, planes] (float32)."""
        rank = len(self.rollout.env.observation_space["obs"].shape)
        return obs.reshape(obs.shape[:obs.ndim - rank] + self.planes_shape).astype(jnp.float32)

    def _self_play(self, key):
        cfg = self.config

        def act(obs, step_key, to_move):  # a search from each position; its policy recorded
            planes, legal = self.planes(obs)
            out = self.search.search(self.network.current_params(planes), step_key,
                                     self.rollout.env.env_state(), planes, legal,
                                     cfg.num_simulations, cfg.gumbel_scale, to_move=to_move)
            action = out.action.astype(jnp.int32)
            if cfg.explore > 0:  # the move played, not the search's policy recorded
                action = explore_legal(jax.random.fold_in(step_key, 1), action, legal,
                                       cfg.explore)
            # the improved policy, and the root's value for its player to move
            return action, (out.action_weights, out.search_tree.summary().value)

        return self.rollout.run_with_turns(act, key, cfg.num_steps)

    def _iteration(self, key):
        cfg = self.config
        play_key, update_key = jax.random.split(key)
        trajectory = self._self_play(play_key)
        outcome, complete = game_outcomes(trajectory.rewards, trajectory.terminated,
                                          trajectory.moves_again)
        policy, searched = trajectory.extras
        value, weight = outcome, complete.astype(jnp.float32)
        if cfg.search_value > 0:  # every position learnt; its game's outcome where known
            mixed = (1.0 - cfg.search_value) * outcome + cfg.search_value * searched
            value, weight = jnp.where(complete, mixed, searched), jnp.ones_like(weight)
        records = {"obs": trajectory.observations["obs"], "policy": policy, "value": value,
                   "weight": weight}
        self.replay.insert(jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), records))

        def update(_, sample_key):
            batch, _ = self.replay.sample(sample_key, cfg.batch_size)
            obs, policy = transform(jax.random.fold_in(sample_key, 1), batch["obs"],
                                    batch["policy"], self.symmetries)
            stats = self.optimizer.step(self.board(obs), policy, batch["value"],
                                        batch["weight"])
            return None, (stats["loss"], stats["aux"]["policy_loss"], stats["aux"]["value_loss"])

        keys = jax.random.split(update_key, cfg.updates_per_iteration)
        _, (losses, policy_losses, value_losses) = mg.scan(update, None, keys)
        return {**trajectory.episode_statistics(), "loss": losses.mean(),
                "policy_loss": policy_losses.mean(), "value_loss": value_losses.mean(),
                "steps": jnp.asarray(cfg.num_envs * cfg.num_steps, jnp.int32)}

    @mg.api
    def greedy(self, observation):
        """The network's most likely legal move for a batch of the games' observations
        {"obs", "legal"} (no search)."""
        planes, legal = self.planes(observation)
        logits, _ = self.network.forward(planes)
        return jnp.argmax(jnp.where(legal, logits, -jnp.inf), -1).astype(jnp.int32)

