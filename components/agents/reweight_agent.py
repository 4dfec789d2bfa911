"""The path-reweighting agent: sample N paths with the current policy, score each path with a
quality q(p), reweight them into Q, fit the policy to Q by weighted maximum likelihood, and
report the information gained, D(Q‖P̂) in bits, and the effective sample size.

Two executables: `sample(key)` runs N environments for one episode each (T = the episode
limit) as one `lax.scan` of policy sampling and environment steps (a `Rollout`), and returns
the paths with their weights and statistics; `fit(obs, action, mask, weight)` is one
gradient step, called `fit_steps` times per iteration.

Its parts can be swapped without subclassing (keyword arguments, see `ReweightAgent`): the
environments, the policy, an observation preprocessor, the quality q(p) (a function of the
paths), the loss and the optimizer.

What a path is comes from the task, not from a switch in this file: one episode of a task of
one player, one whole game of self-play on a two-player game, q(p) its outcome for the learner
(the path sources of `components.agents.reweight_paths` and `reweight_games`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

import metagraph as mg
from components.agents.parts import (
    LossPart,
    make_env,
    make_loss,
    make_optimizer,
    make_policy,
)
from components.agents.preprocessing import acting_view, check_preprocessor, preprocess
from components.agents.reweight_config import ReweightConfig
from components.agents.reweight_paths import paths_of
from components.agents.self_play import check_playable, deprecated_self_play
from components.losses import WeightedNLLLoss
from components.reweighting import PathReweighting

MAX_HORIZON = 2**20  # the longest path a path-reweighting agent holds whole


class ReweightAgent(mg.Component):
    """The path-reweighting agent over `config.num_envs` environments of `env_id` (see the
    module docstring).

    Args:
        env_id: the environment (`config.door` says which door steps it).
        config: the hyperparameters (`ReweightConfig`).
        name: the scope name (default "reweight_agent").
        env: the environments (default `Environment(env_id, config.num_envs, door=config.door,
            **config.env_kwargs)`): any component with its `reset`/`step` APIs, `num_envs`
            and spaces (`components.agents.parts.make_env`).
        policy: the policy (default `Policy(action_space, hidden=config.hidden,
            value=None)`; a `Policy` given here takes the config's `hidden` unless its
            constructor was given one). It needs `sample_action(obs, key)`,
            `greedy_action(obs)` and what the loss calls (the default loss:
            `log_prob(obs, action)`).
        preprocessor: a component applied to observations before the policy
            (`forward(obs)`, optionally `update(obs)` called during rollouts; see
            `components.agents.preprocessing`). Qualities see the environments' own
            observations; the fit sees them preprocessed. Default: none.
        quality: q(p) as a function of the N paths, `quality(paths) -> float[N]`, `paths` a
            dict of [N, T, ...] arrays: "obs" (the environments' own, a game's {"obs",
            "legal"}), "action", "reward" and "mask" (1 on the path's steps; in a game, on the
            learner's moves); a game's also "plies" [N, T] (1 on every move of the game),
            "outcome" [N] (the learner's +1, 0, -1) and "side" [N] (the learner's player).
            Functions of `components.reweighting.quality` build such scores. Default: the
            config's `quality`, by name.
        loss: a component with `loss(obs, action, mask, weight) -> (total, stats)`, or a
            function of the policy returning one (default `WeightedNLLLoss(policy)`).
        optimizer: an optax `GradientTransformation` (default Adam at
            `config.learning_rate`); gradients are clipped to `config.max_grad_norm` first.
    """

    def __init__(self, env_id: str, config: ReweightConfig = ReweightConfig(),
                 name: str | None = None, *, env: mg.Component | None = None,
                 policy: mg.Component | None = None,
                 preprocessor: mg.Component | None = None,
                 quality: Callable[[dict[str, Any]], jax.Array] | None = None,
                 loss: LossPart = None, optimizer: optax.GradientTransformation | None = None):
        super().__init__(name)
        self.config = config
        if quality is not None and not callable(quality):
            raise TypeError(f"ReweightAgent: quality must be a function of the paths giving "
                            f"float[num_envs], got {type(quality).__name__}")
        self.path_quality = quality
        check_playable("ReweightAgent", env_id, config.env_kwargs)
        env = make_env("ReweightAgent", env, env_id, config)
        self.path_source = paths_of(env)  # what a path is: an episode, or a whole game
        self.path_source.check_quality(config.quality, env_id, env.env_spec)
        self.rollout = self.path_source.rollout(env)
        self.pool = self.path_source.pool(env, config)  # a game's earlier policies
        self._check_horizon(env_id)
        self.preprocessor = check_preprocessor("ReweightAgent", preprocessor)
        # (a game's observations carry the legal moves: one MaskedPolicy for both sides)
        self.policy = make_policy(policy, env.action_space, None, env.observation_space,
                                  hidden=config.hidden)
        self.searcher = (self.path_source.searcher(self, env_id)
                         if config.search_simulations > 0 else None)
        self.reweighting = PathReweighting(config.scheme, temperature=config.temperature,
                                           fraction=config.fraction, strict=False)
        self.loss = make_loss("ReweightAgent", loss, self.policy, policy is not None,
                              WeightedNLLLoss)
        self.optimizer = make_optimizer("ReweightAgent", optimizer, self.loss, self.policy,
                                        optax.adam(config.learning_rate), config.max_grad_norm)

    @property
    def self_play(self) -> bool:
        """Deprecated: whether the task is a two-player game (`rollout.num_players > 1`)."""
        return deprecated_self_play(self)

    def _check_horizon(self, env_id: str) -> None:
        """A ValueError where every path held whole ([num_envs, T] of each quantity) would
        not fit: T above MAX_HORIZON."""
        if self.horizon > MAX_HORIZON:
            raise ValueError(f"ReweightAgent: {env_id}'s episodes last up to {self.horizon:,} "
                             f"steps (its time limit); path reweighting keeps every path whole "
                             f"([num_envs, T]), T at most {MAX_HORIZON:,}: register it with "
                             f"a shorter time limit")

    @property
    def horizon(self) -> int:
        """Steps of one path: the environment's episode limit."""
        return self.rollout.env.env_spec.max_episode_steps

    def scored(self, paths: dict[str, Any], default: Callable[[], jax.Array]) -> jax.Array:
        """q(p) of the N paths (a method, not an API): the user's `quality(paths)` where
        given (checked to be one number per path), else `default()` (the config's quality)."""
        if self.path_quality is None:
            return default()
        q = jnp.asarray(self.path_quality(dict(paths)))
        n = self.config.num_envs
        if q.shape != (n,) or not (jnp.issubdtype(q.dtype, jnp.floating)
                                   or jnp.issubdtype(q.dtype, jnp.integer)):
            raise ValueError(f"ReweightAgent: quality(paths) must give one number per path, "
                             f"float[{n}], got {q.dtype}{list(q.shape)}")
        return q.astype(jnp.float32)

    def _paths(self, reset_key, key):
        """The N paths [N, T, ...] from a reset, with their mask and qualities q(p) (the
        path source's `sample`)."""
        return self.path_source.sample(self, reset_key, key)

    def _select(self, q, key):
        """Reweight paths of quality q into Q; M indices resampled ∝ w (systematic), so that the
        fit sees equally weighted paths, and only M of the N, which is most of its cost saved
        when Q is concentrated."""
        if self.config.scheme == "exponential":  # temperature in units of the spread of q
            q = q / (q.std() + 1e-6)
        reweighted = self.reweighting.reweight(q)
        chosen = self.reweighting.resample(q, key, self.config.fit_paths)
        return {"chosen": chosen, "bits": reweighted["bits"], "ess": reweighted["ess"]}

    @mg.api
    def sample(self, key):
        """One episode in each of the N environments, reweighted: the M resampled paths to fit,
        bits, effective sample size and return statistics."""
        reset_key, key = jax.random.split(key)
        paths, q = self._paths(reset_key, key)
        selected = self._select(q, key)
        fit = {name: jax.tree.map(lambda x: x[selected["chosen"]], paths[name])
               for name in ("obs", "action", "mask")}
        fit["obs"] = preprocess(self.preprocessor, fit["obs"])
        returns = (paths["reward"] * paths["mask"]).sum(-1)
        return {**fit, "weight": jnp.full((self.config.fit_paths,), 1.0 / self.config.fit_paths),
                "bits": selected["bits"], "ess": selected["ess"],
                "return_mean": returns.mean(), "return_max": returns.max(),
                "steps": paths.get("plies", paths["mask"]).sum()}

    @mg.api
    def sample_paths(self, key):
        """One episode in each of the N environments, not reweighted: the paths, their
        qualities and returns (a distributed sampler's share of an iteration)."""
        reset_key, key = jax.random.split(key)
        paths, q = self._paths(reset_key, key)
        return {"obs": preprocess(self.preprocessor, paths["obs"]), "action": paths["action"],
                "mask": paths["mask"],
                "quality": q, "return": (paths["reward"] * paths["mask"]).sum(-1)}

    @mg.api
    def select(self, quality, key):
        """Reweight paths pooled from several samplers: the indices of the M paths to fit,
        bits and effective sample size."""
        return self._select(quality, key)

    @mg.api
    def fit(self, obs, action, mask, weight):
        """One gradient step of weighted maximum likelihood on the paths."""
        return self.optimizer.step(obs, action, mask, weight)

    @mg.api
    def act(self, observation, key):
        """Sampled actions for a batch of observations (separate name, so that acting and
        fitting can be built into one graph with their own shapes)."""
        return self.policy.sample_action(acting_view(self.rollout.env, self.preprocessor,
                                                     observation), key)[0]

    @mg.api
    def greedy(self, observation):
        """The policy's most likely actions for a batch of observations."""
        return self.policy.greedy_action(acting_view(self.rollout.env, self.preprocessor,
                                                     observation))
