"""PPO (Schulman et al. 2017) as a meta-graph, in the style of PureJaxRL: one executable runs
`iterations_per_call` whole iterations, each a fused rollout of `num_steps` steps over
`num_envs` native environments (policy sampling and FFI steps in one `lax.scan`), GAE, and
`epochs` x `minibatches` clipped-surrogate updates (`mg.scan` over optimizer steps).

APIs: `start(key)` resets the environments; `train(key)` runs `iterations_per_call`
iterations and returns their statistics; `greedy(observation)` for evaluation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

import metagraph as mg
from components.agents.ppo_config import PPOConfig
from components.envs import Environment
from components.losses import PPOLoss, gae
from components.optimizer import Optimizer
from components.policy import Policy


class PPOAgent(mg.Component):
    def __init__(self, env_id: str, config: PPOConfig = PPOConfig(),
                 total_steps: int = 500_000, name: str | None = None):
        super().__init__(name)
        self.config = config
        self.env = Environment(env_id, config.num_envs, backend=config.backend)
        self.policy = Policy(self.env.action_space, hidden=config.hidden, value="separate",
                             squash=False)
        self.loss = PPOLoss(self.policy, clip=config.clip, value_coef=config.value_coef,
                            entropy_coef=config.entropy_coef)
        updates = max(1, total_steps // (config.num_envs * config.num_steps)) \
            * config.epochs * config.minibatches
        rate = (optax.linear_schedule(config.learning_rate, 0.0, updates) if config.anneal_lr
                else config.learning_rate)
        self.optimizer = Optimizer(self.loss, "loss", optax.adam(rate, eps=1e-5),
                                   max_grad_norm=config.max_grad_norm, has_aux=True,
                                   wrt=self.policy)

    def _obs_and_returns(self):
        n, shape = self.config.num_envs, self.env.observation_space.shape
        return (self.get_state("obs", jnp.zeros((n, *shape), jnp.float32)),
                self.get_state("episode_return", jnp.zeros((n,), jnp.float32)))

    @mg.api
    def start(self, key):
        obs = self.env.reset(key)
        self._obs_and_returns()
        self.set_state("obs", obs)
        self.set_state("episode_return", jnp.zeros((self.config.num_envs,), jnp.float32))
        return obs

    def _rollout(self, key):
        cfg, functional = self.config, self.env.functional
        obs, episode_return = self._obs_and_returns()

        def step(carry, step_key):
            env_state, obs, episode_return = carry
            action, log_prob = self.policy.sample_action(obs, step_key)
            value = self.policy.value(obs)
            env_state, next_obs, reward, terminated, truncated, _ = \
                functional.step_with_final_obs(env_state, action)
            done = terminated | truncated
            episode_return = episode_return + reward
            finished = jnp.where(done, episode_return, 0.0)
            episode_return = jnp.where(done, 0.0, episode_return)
            record = (obs, action, log_prob, value, reward, done, finished)
            return (env_state, next_obs, episode_return), record

        carry = (self.env.read_state(), obs, episode_return)
        (env_state, obs, episode_return), trajectory = mg.scan(
            step, carry, jax.random.split(key, cfg.num_steps))
        self.env.write_state(env_state)
        self.set_state("obs", obs)
        self.set_state("episode_return", episode_return)
        return trajectory, self.policy.value(obs)

    def _iteration(self, key):
        cfg = self.config
        rollout_key, shuffle_key = jax.random.split(key)
        (obs, action, log_prob, value, reward, done, finished), last_value = \
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
    def train(self, key):
        """`iterations_per_call` iterations; per-iteration statistics [K]."""
        def one(_, iteration_key):
            return None, self._iteration(iteration_key)

        return mg.scan(one, None, jax.random.split(key, self.config.iterations_per_call))[1]

    @mg.api
    def greedy(self, observation):
        return self.policy.greedy_action(observation)
