"""PureJaxRL's PPO (luchris429/purejaxrl, purejaxrl/ppo.py, Apache-2.0), run as the reference
beside metagraph's PPO by bench/learning.py: its own environment (gymnax's CartPole), network
(flax, orthogonal initialisation), GAE and clipped losses, with the script's own settings (4
environments x 128 steps, 4 epochs of 4 minibatches, Adam 2.5e-4 annealed, clip 0.2, entropy
0.01). Changed only where a comparison needs it: no logging, one program per seed, a
categorical written out (`distrax` is not needed), `terminated | truncated` where gymnax 1.0
reports them apart, and the final greedy policy evaluated over 100 episodes.

    /tmp/reference/bin/python bench/references/purejaxrl_ppo.py CartPole-v1 --steps 500000 \
        --seeds 0 1 2

Prints one JSON line per seed: {"seed", "train_s", "greedy_return", "episodes"}.
"""

from __future__ import annotations

from typing import NamedTuple

import flax.linen as nn
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from evaluation import run_seeds
from flax.linen.initializers import constant, orthogonal
from flax.training.train_state import TrainState
from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

CONFIG = {"LR": 2.5e-4, "NUM_ENVS": 4, "NUM_STEPS": 128, "UPDATE_EPOCHS": 4,
          "NUM_MINIBATCHES": 4, "GAMMA": 0.99, "GAE_LAMBDA": 0.95, "CLIP_EPS": 0.2,
          "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5, "ANNEAL_LR": True}


class ActorCritic(nn.Module):
    action_dim: int

    @nn.compact
    def __call__(self, x):
        def dense(width, gain):
            return nn.Dense(width, kernel_init=orthogonal(gain), bias_init=constant(0.0))

        actor = nn.tanh(dense(64, np.sqrt(2))(nn.tanh(dense(64, np.sqrt(2))(x))))
        critic = nn.tanh(dense(64, np.sqrt(2))(nn.tanh(dense(64, np.sqrt(2))(x))))
        return dense(self.action_dim, 0.01)(actor), jnp.squeeze(dense(1, 1.0)(critic), -1)

    def logits(self, params, obs):
        """The policy's logits (for the greedy evaluation)."""
        return self.apply(params, obs)[0]


class Transition(NamedTuple):
    done: jnp.ndarray
    action: jnp.ndarray
    value: jnp.ndarray
    reward: jnp.ndarray
    log_prob: jnp.ndarray
    obs: jnp.ndarray


def log_prob(logits, action):
    return jnp.take_along_axis(jax.nn.log_softmax(logits), action[..., None], -1)[..., 0]


def entropy(logits):
    logp = jax.nn.log_softmax(logits)
    return -(jnp.exp(logp) * logp).sum(-1)


def make_train(config):
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    config["MINIBATCH_SIZE"] = config["NUM_ENVS"] * config["NUM_STEPS"] // config[
        "NUM_MINIBATCHES"]
    env, env_params = gymnax.make(config["ENV_NAME"])
    env = LogWrapper(FlattenObservationWrapper(env))
    network = ActorCritic(env.action_space(env_params).n)

    def linear_schedule(count):
        frac = 1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"])) / config[
            "NUM_UPDATES"]
        return config["LR"] * frac

    def train(rng):
        rng, _rng = jax.random.split(rng)
        network_params = network.init(_rng, jnp.zeros(env.observation_space(env_params).shape))
        tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                         optax.adam(learning_rate=linear_schedule if config["ANNEAL_LR"]
                                    else config["LR"], eps=1e-5))
        train_state = TrainState.create(apply_fn=network.apply, params=network_params, tx=tx)
        rng, _rng = jax.random.split(rng)
        obsv, env_state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(_rng, config["NUM_ENVS"]), env_params)

        def _update_step(runner_state, unused):
            def _env_step(runner_state, unused):
                train_state, env_state, last_obs, rng = runner_state
                rng, _rng = jax.random.split(rng)
                logits, value = network.apply(train_state.params, last_obs)
                action = jax.random.categorical(_rng, logits)
                rng, _rng = jax.random.split(rng)
                obsv, env_state, reward, term, trunc, info = jax.vmap(
                    env.step, in_axes=(0, 0, 0, None))(
                    jax.random.split(_rng, config["NUM_ENVS"]), env_state, action, env_params)
                transition = Transition(term | trunc, action, value, reward,
                                        log_prob(logits, action), last_obs)
                return (train_state, env_state, obsv, rng), transition

            runner_state, traj_batch = jax.lax.scan(_env_step, runner_state, None,
                                                    config["NUM_STEPS"])
            train_state, env_state, last_obs, rng = runner_state
            _, last_val = network.apply(train_state.params, last_obs)

            def _get_advantages(gae_and_next_value, transition):
                gae, next_value = gae_and_next_value
                delta = transition.reward + config["GAMMA"] * next_value * (
                    1 - transition.done) - transition.value
                gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - transition.done) * gae
                return (gae, transition.value), gae

            _, advantages = jax.lax.scan(_get_advantages, (jnp.zeros_like(last_val), last_val),
                                         traj_batch, reverse=True, unroll=16)
            targets = advantages + traj_batch.value

            def _update_epoch(update_state, unused):
                def _update_minbatch(train_state, batch_info):
                    traj_batch, gae, targets = batch_info

                    def _loss_fn(params):
                        logits, value = network.apply(params, traj_batch.obs)
                        logp = log_prob(logits, traj_batch.action)
                        value_pred_clipped = traj_batch.value + (value - traj_batch.value).clip(
                            -config["CLIP_EPS"], config["CLIP_EPS"])
                        value_loss = 0.5 * jnp.maximum(
                            jnp.square(value - targets),
                            jnp.square(value_pred_clipped - targets)).mean()
                        ratio = jnp.exp(logp - traj_batch.log_prob)
                        norm = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor = -jnp.minimum(ratio * norm, jnp.clip(
                            ratio, 1.0 - config["CLIP_EPS"], 1.0 + config["CLIP_EPS"]) * norm
                        ).mean()
                        return (loss_actor + config["VF_COEF"] * value_loss
                                - config["ENT_COEF"] * entropy(logits).mean())

                    grads = jax.grad(_loss_fn)(train_state.params)
                    return train_state.apply_gradients(grads=grads), None

                train_state, traj_batch, advantages, targets, rng = update_state
                rng, _rng = jax.random.split(rng)
                batch_size = config["MINIBATCH_SIZE"] * config["NUM_MINIBATCHES"]
                permutation = jax.random.permutation(_rng, batch_size)
                batch = jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]),
                                     (traj_batch, advantages, targets))
                minibatches = jax.tree.map(
                    lambda x: jnp.reshape(jnp.take(x, permutation, axis=0),
                                          [config["NUM_MINIBATCHES"], -1] + list(x.shape[1:])),
                    batch)
                train_state, _ = jax.lax.scan(_update_minbatch, train_state, minibatches)
                return (train_state, traj_batch, advantages, targets, rng), None

            update_state, _ = jax.lax.scan(
                _update_epoch, (train_state, traj_batch, advantages, targets, rng), None,
                config["UPDATE_EPOCHS"])
            return (update_state[0], env_state, last_obs, update_state[-1]), None

        rng, _rng = jax.random.split(rng)
        runner_state, _ = jax.lax.scan(_update_step, (train_state, env_state, obsv, _rng),
                                       None, config["NUM_UPDATES"])
        return runner_state[0].params

    return train, network.logits, env, env_params


if __name__ == "__main__":
    run_seeds(__doc__.split("\n")[0], make_train, lambda env: CONFIG)
