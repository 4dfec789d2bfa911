"""PPO (Schulman et al. 2017) as a meta-graph, in the style of PureJaxRL: one executable runs
`iterations_per_call` whole iterations, each a fused rollout of `num_steps` steps over
`num_envs` native environments (policy sampling and FFI steps in one `lax.scan`), GAE, and
`epochs` x `minibatches` clipped-surrogate updates (`mg.scan` over optimizer steps).

APIs: `start(key)` resets the environments; `train(key, iterations)` runs the first
`iterations` of `iterations_per_call` iterations and returns their statistics;
`greedy(observation)` for evaluation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

import metagraph as mg
from components.agents.iterative_agent import IterativeAgent
from components.agents.ppo_config import PPOConfig
from components.losses import PPOLoss, gae
from components.optimizer import Optimizer
from components.policy import Policy


class PPOAgent(IterativeAgent):
    def __init__(self, env_id: str, config: PPOConfig = PPOConfig(),
                 total_steps: int = 500_000, name: str | None = None):
        super().__init__(env_id, config, name)
        self.policy = Policy(self.env.action_space, hidden=config.hidden, value="separate",
                             squash=False)
        self.loss = PPOLoss(self.policy, clip=config.clip, value_coef=config.value_coef,
                            entropy_coef=config.entropy_coef)
        updates = max(1, total_steps // self.steps_per_iteration(config)) \
            * config.epochs * config.minibatches
        rate = (optax.linear_schedule(config.learning_rate, 0.0, updates) if config.anneal_lr
                else config.learning_rate)
        self.optimizer = Optimizer(self.loss, "loss", optax.adam(rate, eps=1e-5),
                                   max_grad_norm=config.max_grad_norm, has_aux=True,
                                   wrt=self.policy, flat=True)

    @staticmethod
    def steps_per_iteration(config: PPOConfig) -> int:
        return config.num_envs * config.num_steps

    def _rollout(self, key):
        def act(obs, step_key):
            action, log_prob = self.policy.sample_action(obs, step_key)
            return action, (log_prob, self.policy.value(obs))

        trajectory, last_obs = self._run_envs(act, key, self.config.num_steps)
        return trajectory, self.policy.value(last_obs)

    def _iteration(self, key):
        cfg = self.config
        rollout_key, shuffle_key = jax.random.split(key)
        (obs, action, (log_prob, value), reward, done, finished), last_value = \
            self._rollout(rollout_key)
        discounts = cfg.gamma * (1.0 - done.astype(jnp.float32))
        advantage = gae(reward * cfg.reward_scale, discounts,
                        jnp.concatenate([value, last_value[None]]), cfg.gae_lambda)
        target = advantage + value
        batch = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])),
                             (obs, action, log_prob, advantage, target, value))
        size = cfg.num_envs * cfg.num_steps
        minibatch = size // cfg.minibatches

        def epoch(_, epoch_key):
            order = jax.random.permutation(epoch_key, size)
            shuffled = jax.tree.map(
                lambda x: x[order].reshape((cfg.minibatches, minibatch, *x.shape[1:])), batch)

            def update(_, mb):
                obs_mb, action_mb, logp_mb, adv_mb, target_mb, value_mb = mb
                adv_mb = (adv_mb - adv_mb.mean()) / (adv_mb.std() + 1e-8)
                stats = self.optimizer.step(obs_mb, action_mb, logp_mb, adv_mb, target_mb,
                                            value_mb)
                return None, stats["loss"]

            return mg.scan(update, None, shuffled)

        _, losses = mg.scan(epoch, None, jax.random.split(shuffle_key, cfg.epochs))
        episodes = (finished != 0).sum()
        return {"episode_return_sum": finished.sum(), "episodes": episodes,
                "loss": losses.mean(), "steps": jnp.asarray(size, jnp.int32)}

    @mg.api
    def greedy(self, observation):
        return self.policy.greedy_action(observation)
