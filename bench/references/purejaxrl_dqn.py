"""PureJaxRL's DQN (luchris429/purejaxrl, purejaxrl/dqn.py, Apache-2.0), run as the reference
beside metagraph's DQN by bench/learning.py. Its own environment (gymnax), network (flax),
replay (flashbax) and update, as that script has them; changed only where a comparison needs
it: no wandb, one program per seed (as our runs), the recipe's constants as arguments (the
CartPole recipe is the script's own; MinAtar's is the same with the MinAtar paper's network
and replay, as `components/agents/configs/dqn.toml` ships it), `terminated | truncated` where
gymnax 1.0 reports them apart, and the final greedy policy evaluated over 100 episodes.

Runs in its own environment (the packages below are not metagraph's):

    python -m venv /tmp/reference && /tmp/reference/bin/pip install jax flax optax chex \
        gymnax flashbax six
    /tmp/reference/bin/python bench/references/purejaxrl_dqn.py CartPole-v1 --steps 500000 \
        --seeds 0 1 2

Prints one JSON line per seed: {"seed", "train_s", "greedy_return", "episodes"}.
"""

from __future__ import annotations

import chex
import flashbax as fbx
import flax
import flax.linen as nn
import gymnax
import jax
import jax.numpy as jnp
import optax
from evaluation import run_seeds
from flax.training.train_state import TrainState
from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

CARTPOLE = {"NUM_ENVS": 10, "BUFFER_SIZE": 10_000, "BUFFER_BATCH_SIZE": 128,
            "EPSILON_START": 1.0, "EPSILON_FINISH": 0.05, "EPSILON_ANNEAL_FRACTION": 0.5,
            "TARGET_UPDATE_INTERVAL": 500, "LR": 2.5e-4, "LEARNING_STARTS": 10_000,
            "TRAINING_INTERVAL": 10, "GAMMA": 0.99, "TAU": 1.0, "CNN": False}
MINATAR = {**CARTPOLE, "BUFFER_SIZE": 100_000, "EPSILON_ANNEAL_FRACTION": 0.1,
           "TARGET_UPDATE_INTERVAL": 1000, "CNN": True}


class QNetwork(nn.Module):
    """CartPole: the script's MLP (120, 84). MinAtar: the MinAtar paper's network (a 3x3
    convolution of 16 channels, a dense layer of 128)."""
    action_dim: int
    cnn: bool

    @nn.compact
    def __call__(self, x):
        x = x.astype(jnp.float32)
        if self.cnn:
            x = nn.relu(nn.Conv(16, (3, 3), strides=1, padding="SAME")(x))
            x = nn.relu(nn.Dense(128)(x.reshape(x.shape[:-3] + (-1,))))
        else:
            x = nn.relu(nn.Dense(84)(nn.relu(nn.Dense(120)(x))))
        return nn.Dense(self.action_dim)(x)


@chex.dataclass(frozen=True)
class TimeStep:
    obs: chex.Array
    action: chex.Array
    reward: chex.Array
    done: chex.Array


class CustomTrainState(TrainState):
    target_network_params: flax.core.FrozenDict
    timesteps: int
    n_updates: int


def make_train(config):
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_ENVS"]
    config["EPSILON_ANNEAL_TIME"] = config["EPSILON_ANNEAL_FRACTION"] * config["TOTAL_TIMESTEPS"]
    basic_env, env_params = gymnax.make(config["ENV_NAME"])
    env = LogWrapper(basic_env if config["CNN"] else FlattenObservationWrapper(basic_env))
    network = QNetwork(action_dim=basic_env.action_space(env_params).n, cnn=config["CNN"])

    def vmap_reset(n):
        return lambda rng: jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(rng, n), env_params)

    def vmap_step(n):
        return lambda rng, s, a: jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(rng, n), s, a, env_params)

    def train(rng):
        rng, _rng = jax.random.split(rng)
        init_obs, env_state = vmap_reset(config["NUM_ENVS"])(_rng)
        buffer = fbx.make_flat_buffer(
            max_length=config["BUFFER_SIZE"], min_length=config["BUFFER_BATCH_SIZE"],
            sample_batch_size=config["BUFFER_BATCH_SIZE"], add_sequences=False,
            add_batch_size=config["NUM_ENVS"])
        rng_d = jax.random.PRNGKey(0)
        _action = basic_env.action_space().sample(rng_d)
        _, _env_state = env.reset(rng_d, env_params)
        _obs, _, _reward, _term, _trunc, _ = env.step(rng_d, _env_state, _action, env_params)
        buffer_state = buffer.init(TimeStep(obs=_obs, action=_action, reward=_reward,
                                            done=_term | _trunc))
        rng, _rng = jax.random.split(rng)
        network_params = network.init(_rng, jnp.zeros(env.observation_space(env_params).shape))
        train_state = CustomTrainState.create(
            apply_fn=network.apply, params=network_params,
            target_network_params=jax.tree.map(lambda x: jnp.copy(x), network_params),
            tx=optax.adam(learning_rate=config["LR"]), timesteps=0, n_updates=0)

        def eps_greedy(rng, q_vals, t):
            rng_a, rng_e = jax.random.split(rng, 2)
            eps = jnp.clip(((config["EPSILON_FINISH"] - config["EPSILON_START"])
                            / config["EPSILON_ANNEAL_TIME"]) * t + config["EPSILON_START"],
                           config["EPSILON_FINISH"])
            greedy = jnp.argmax(q_vals, axis=-1)
            return jnp.where(jax.random.uniform(rng_e, greedy.shape) < eps,
                             jax.random.randint(rng_a, greedy.shape, 0, q_vals.shape[-1]),
                             greedy)

        def _update_step(runner_state, unused):
            train_state, buffer_state, env_state, last_obs, rng = runner_state
            rng, rng_a, rng_s = jax.random.split(rng, 3)
            action = eps_greedy(rng_a, network.apply(train_state.params, last_obs),
                                train_state.timesteps)
            obs, env_state, reward, term, trunc, info = vmap_step(config["NUM_ENVS"])(
                rng_s, env_state, action)
            train_state = train_state.replace(
                timesteps=train_state.timesteps + config["NUM_ENVS"])
            buffer_state = buffer.add(buffer_state, TimeStep(
                obs=last_obs, action=action, reward=reward, done=term | trunc))

            def _learn_phase(train_state, rng):
                b = buffer.sample(buffer_state, rng).experience
                q_next = jnp.max(network.apply(train_state.target_network_params,
                                               b.second.obs), axis=-1)
                target = b.first.reward + (1 - b.first.done) * config["GAMMA"] * q_next

                def _loss_fn(params):
                    q = network.apply(params, b.first.obs)
                    chosen = jnp.take_along_axis(q, jnp.expand_dims(b.first.action, -1),
                                                 -1).squeeze(-1)
                    return jnp.mean((chosen - target) ** 2)

                loss, grads = jax.value_and_grad(_loss_fn)(train_state.params)
                train_state = train_state.apply_gradients(grads=grads)
                return train_state.replace(n_updates=train_state.n_updates + 1), loss

            rng, _rng = jax.random.split(rng)
            learn = (buffer.can_sample(buffer_state)
                     & (train_state.timesteps > config["LEARNING_STARTS"])
                     & (train_state.timesteps % config["TRAINING_INTERVAL"] == 0))
            train_state, loss = jax.lax.cond(learn, _learn_phase,
                                             lambda t, r: (t, jnp.array(0.0)), train_state, _rng)
            train_state = jax.lax.cond(
                train_state.timesteps % config["TARGET_UPDATE_INTERVAL"] == 0,
                lambda t: t.replace(target_network_params=optax.incremental_update(
                    t.params, t.target_network_params, config["TAU"])),
                lambda t: t, operand=train_state)
            return (train_state, buffer_state, env_state, obs, rng), \
                info["returned_episode_returns"].mean()

        rng, _rng = jax.random.split(rng)
        runner_state, returns = jax.lax.scan(
            _update_step, (train_state, buffer_state, env_state, init_obs, _rng), None,
            config["NUM_UPDATES"])
        return runner_state[0].params

    return train, network.apply, env, env_params


if __name__ == "__main__":
    run_seeds(__doc__.split("\n")[0], make_train,
              lambda env: MINATAR if env.endswith("MinAtar") else CARTPOLE)
