"""Soft Actor-Critic (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications")
as a meta-graph: a tanh-squashed Gaussian actor, twin Q critics whose minimum is used,
Polyak-averaged target critics and automatic entropy tuning towards -|A|, learning from the
component library's uniform `ReplayBuffer`. One executable runs `iterations_per_call`
iterations, each: a fused rollout of `rollout` steps over `num_envs` native environments
(policy sampling and `env.step` in one `mg.scan`), its transitions into the replay, and
`updates_per_iteration` gradient steps. Each gradient step is one `Optimizer` step of
`SACLoss` (critics, actor and log α together) followed by the target critics' Polyak update,
as in Stable-Baselines3's SAC (one gradient step per environment step by default). The first
`learning_starts` environment steps take uniformly random actions and learn nothing.

A transition's discount is γ (1 - terminated) and its next observation `env.step`'s
`final_obs` (the observation before any auto-reset): an episode cut by the time limit is
bootstrapped, one that terminated is not. `greedy(observation)` acts deterministically: the
squashed mean of the actor.

Its parts can be swapped without subclassing (keyword arguments, see `SACAgent`): the actor,
the critic, an observation preprocessor, the loss and the optimizer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

import metagraph as mg
from components.agents.iterations import IterativeAgent
from components.agents.parts import (
    LossPart,
    make_env,
    make_loss,
    make_optimizer,
    make_policy,
)
from components.agents.preprocessing import acting_view, check_preprocessor, preprocess
from components.agents.rollout import Rollout
from components.agents.sac_config import SACConfig
from components.losses.sac_loss import SACLoss, polyak_average
from components.networks import QEnsemble
from components.replay import ReplayBuffer
from metagraph.spaces import Box, Dict


class SACModel(mg.Component):
    """What SAC trains: the actor, the critic and the entropy temperature's logarithm
    (`log_alpha()`, a parameter starting at log `alpha_init`). `SACLoss` is over it and the
    agent's optimizer updates all its parameters.

    Args:
        actor: A policy with `sample_action(obs, key) -> (action, log_prob)`
            (reparameterised) and `greedy_action(obs)`.
        critic: A component with `forward(x) -> Q [B, k]` for x = concat(obs, action),
            `current_params(x)` and `forward_with(params, x)` (every `HaikuNetwork`).
        alpha_init: The initial temperature α (> 0).
        name: The scope name.
    """
    def __init__(self, actor: mg.Component, critic: mg.Component, alpha_init: float = 1.0,
                 name: str | None = None):
        super().__init__(name)
        if not alpha_init > 0:
            raise ValueError(f"SACModel: alpha_init must be > 0, got {alpha_init!r}")
        self.actor, self.critic = actor, critic
        self.alpha_init = float(alpha_init)

    @mg.api
    def log_alpha(self):
        """log α, the entropy temperature's logarithm (a trainable scalar)."""
        return self.get_param("log_alpha", jnp.full((), np.log(self.alpha_init), jnp.float32))


class SACAgent(IterativeAgent):
    """SAC over `config.num_envs` environments of `env_id` (see the module docstring).

    Args:
        env_id: the environment, with a bounded Box action space (`config.door` says which
            door steps it).
        config: the hyperparameters (`SACConfig`).
        total_steps: the training's length (unused by the defaults: SAC's learning rate is
            constant; kept for the agents' common signature).
        name: the scope name (default "sac_agent").
        env: the environments (default `Environment(env_id, config.num_envs, door=config.door,
            **config.env_kwargs)`): any component with its `reset`/`step` APIs, `num_envs`
            and spaces (`components.agents.parts.make_env`).
        actor: the policy (default `Policy(action_space, hidden=config.hidden, value=None,
            squash=True, activation=relu)`: a tanh-squashed Gaussian whose mean and log std
            come from one network; a `Policy` given here takes those settings for the ones
            its constructor was not given). It needs `sample_action(obs, key) -> (action,
            log_prob)`, reparameterised, with actions in the action space, and `greedy_action(obs)`.
        critic: the Q-networks (default `QEnsemble(config.hidden, config.critics)`), see
            `SACModel`.
        preprocessor: a component applied to observations before the actor and the critic
            (`forward(obs)`, optionally `update(obs)` called during rollouts; see
            `components.agents.preprocessing`). The replay keeps the raw observations; a
            sampled batch is preprocessed when it is learnt from. Default: none.
        loss: a function of the agent's `SACModel` returning a component with `loss(obs,
            action, reward, discount, target_q_next, next_log_prob, key) -> (total,
            stats)` (default `SACLoss(model, -config.target_entropy_scale * |A|,
            config.autotune)`).
        optimizer: an optax `GradientTransformation` over all the model's parameters (default
            Adam at `config.learning_rate`); no gradient clipping.

    Raises:
        ValueError: an action space that is not a bounded Box of one axis.
    """

    def __init__(self, env_id: str, config: SACConfig = SACConfig(),
                 total_steps: int = 1_000_000, name: str | None = None, *,
                 env: mg.Component | None = None,
                 actor: mg.Component | None = None, critic: mg.Component | None = None,
                 preprocessor: mg.Component | None = None, loss: LossPart = None,
                 optimizer: optax.GradientTransformation | None = None):
        super().__init__(name)
        self.config = config
        self.rollout = Rollout(make_env("SACAgent", env, env_id, config))
        self.preprocessor = check_preprocessor("SACAgent", preprocessor)
        space = self.rollout.env.action_space
        if not (isinstance(space, Box) and len(space.shape) == 1
                and np.isfinite(space.low).all() and np.isfinite(space.high).all()):
            raise ValueError(f"SACAgent: SAC needs a bounded Box action space of one axis; "
                             f"{env_id} has {space!r}")
        self.low, self.high = (np.broadcast_to(bound, space.shape).astype(np.float32)
                               for bound in (space.low, space.high))
        actor = make_policy(actor, space, None, hidden=config.hidden, squash=True,
                            activation=jax.nn.relu)
        critic = critic if critic is not None else QEnsemble(config.hidden, config.critics)
        self.model = SACModel(actor, critic, config.alpha_init)
        obs = self.rollout.observation_space_of()
        record = Dict(obs=obs, action=Box(space.shape), reward=Box(()), discount=Box(()),
                      next_obs=obs)
        self.replay = ReplayBuffer(config.buffer_size, record)
        target_entropy = -config.target_entropy_scale * space.shape[0]
        self.loss = make_loss("SACAgent", loss, self.model, False,
                              lambda model: SACLoss(model, target_entropy, config.autotune))
        self.optimizer = make_optimizer("SACAgent", optimizer, self.loss, self.model,
                                        optax.adam(config.learning_rate), config.max_grad_norm)

    @staticmethod
    def steps_per_iteration(config: SACConfig) -> int:
        """Environment steps per iteration: num_envs * rollout."""
        return config.num_envs * config.rollout

    def _clip(self, action: jax.Array) -> jax.Array:
        """Actions inside the action space (the squashing can round past a bound)."""
        return jnp.clip(action, self.low, self.high)

    def _target_params(self, x):
        online = self.model.critic.current_params(x)
        return self.get_state("target_params", lambda key: online)

    def _transitions(self, key):
        """A rollout's transitions [rollout * num_envs]: random actions before
        `learning_starts` environment steps, the actor's samples after."""
        cfg = self.config
        env_steps = self.get_state("env_steps", jnp.zeros((), jnp.int32))
        warming_up = env_steps < cfg.learning_starts

        def act(obs, step_key):
            policy_key, random_key = jax.random.split(step_key)
            seen = preprocess(self.preprocessor, obs, update=True)
            action, _ = self.model.actor.sample_action(seen, policy_key)
            random = jax.random.uniform(random_key, action.shape, minval=self.low,
                                        maxval=self.high)
            return self._clip(jnp.where(warming_up, random, action)), ()

        trajectory = self.rollout.run(act, key, cfg.rollout)
        self.set_state("env_steps", env_steps + cfg.rollout * cfg.num_envs)
        records = {"obs": trajectory.observations, "action": trajectory.actions,
                   "reward": trajectory.rewards,
                   "discount": cfg.gamma * (1.0 - trajectory.terminated.astype(jnp.float32)),
                   "next_obs": trajectory.final_observations}
        return (jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), records),
                trajectory.episode_statistics())

    def _update(self, key):
        """One gradient step (critics, actor, log α) on a uniform sample, then the target
        critics' Polyak update; returns the loss, and the loss's "alpha" and "entropy"
        statistics where it has them."""
        cfg = self.config
        sample_key, next_key, loss_key = jax.random.split(key, 3)
        batch, _ = self.replay.sample(sample_key, cfg.batch_size)
        obs, next_obs = (preprocess(self.preprocessor, batch[name])
                         for name in ("obs", "next_obs"))
        next_action, next_log_prob = self.model.actor.sample_action(next_obs, next_key)
        x_next = jnp.concatenate([next_obs, next_action], -1)
        target = self._target_params(x_next)
        target_q = self.model.critic.forward_with(target, x_next)
        stats = self.optimizer.step(obs, batch["action"], batch["reward"], batch["discount"],
                                    target_q, next_log_prob, loss_key)
        online = self.model.critic.current_params(x_next)
        self.set_state("target_params", polyak_average(online, target, cfg.tau))
        return {"loss": stats["loss"], **{k: v for k, v in stats["aux"].items()
                                          if k in ("alpha", "entropy")}}

    def _iteration(self, key):
        cfg = self.config
        rollout_key, update_key = jax.random.split(key)
        records, episodes = self._transitions(rollout_key)
        self.replay.insert(records)
        learning = self.get_state("env_steps", jnp.zeros((), jnp.int32)) > cfg.learning_starts

        def updates(update_key):
            keys = jax.random.split(update_key, cfg.updates_per_iteration)
            return jax.tree.map(jnp.mean, mg.scan(lambda _, k: (None, self._update(k)),
                                                  None, keys)[1])

        stats = mg.cond(learning, updates, None, update_key)
        return {**episodes, "steps": jnp.asarray(cfg.rollout * cfg.num_envs, jnp.int32),
                **stats}

    @mg.api
    def greedy(self, observation):
        """The actor's deterministic actions for a batch of observations: its squashed mean
        (tanh of the Gaussian's mean, scaled into the action space)."""
        return self._clip(self.model.actor.greedy_action(
            acting_view(self.rollout.env, self.preprocessor, observation)))

    @mg.api
    def act(self, observation, key):
        """Actions sampled from the actor for a batch of observations: `evaluate
        --stochastic`, `export --stochastic`."""
        return self._clip(self.model.actor.sample_action(
            acting_view(self.rollout.env, self.preprocessor, observation), key)[0])
