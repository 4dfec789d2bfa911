"""A plain hand-written PPO in the style of PureJaxRL: the whole training is one `jax.jit`
(a `lax.scan` over updates, each a rollout scan, GAE, and epochs x minibatches of Adam steps
on the clipped surrogate). Same hyperparameters and networks as metagraph's `PPOAgent`
defaults, same environment (the native CartPole through the XLA FFI). Used by
bench/train_speed.py as the peer."""

from __future__ import annotations

import haiku as hk
import jax
import jax.numpy as jnp
import optax

import components.envs as envs

NUM_ENVS, NUM_STEPS, EPOCHS, MINIBATCHES = 4, 128, 4, 4
LR, GAMMA, LAMBDA, CLIP, ENT, VF, MAX_NORM = 2.5e-4, 0.99, 0.95, 0.2, 0.01, 0.5, 0.5


def make_train(total_steps: int, env_id: str = "CartPole-v1"):
    env = envs.make_functional(env_id)
    num_actions = envs.spec(env_id).action_space.n
    num_updates = total_steps // (NUM_ENVS * NUM_STEPS)

    def network(obs):
        actor = hk.nets.MLP([64, 64, num_actions], activation=jax.nn.tanh)(obs)
        critic = hk.nets.MLP([64, 64, 1], activation=jax.nn.tanh)(obs)
        return actor, critic[..., 0]

    net = hk.without_apply_rng(hk.transform(network))
    schedule = optax.linear_schedule(LR, 0.0, num_updates * EPOCHS * MINIBATCHES)
    tx = optax.chain(optax.clip_by_global_norm(MAX_NORM), optax.adam(schedule, eps=1e-5))

    def loss_fn(params, obs, action, old_logp, adv, target, old_value):
        logits, value = net.apply(params, obs)
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, action[:, None], 1)[:, 0]
        ratio = jnp.exp(logp - old_logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        policy = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * adv).mean()
        value_loss = 0.5 * ((value - target) ** 2).mean()
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        return policy + VF * value_loss - ENT * entropy

    def train(key):
        key, init_key, reset_key = jax.random.split(key, 3)
        env_state, obs = env.reset(reset_key, NUM_ENVS)
        params = net.init(init_key, obs)
        opt_state = tx.init(params)

        def update(carry, update_key):
            params, opt_state, env_state, obs, ep_ret = carry
            rollout_key, shuffle_key = jax.random.split(update_key)

            def step(carry, step_key):
                env_state, obs, ep_ret = carry
                logits, value = net.apply(params, obs)
                action = jax.random.categorical(step_key, logits).astype(jnp.int32)
                logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
                out = env.step(env_state, action)
                env_state, next_obs, reward = out.state, out.obs, out.reward
                done = out.terminated | out.truncated
                ep_ret = ep_ret + reward
                finished = jnp.where(done, ep_ret, 0.0)
                ep_ret = jnp.where(done, 0.0, ep_ret)
                return (env_state, next_obs, ep_ret), (obs, action, logp, value, reward, done,
                                                       finished)

            (env_state, obs, ep_ret), traj = jax.lax.scan(
                step, (env_state, obs, ep_ret), jax.random.split(rollout_key, NUM_STEPS))
            t_obs, t_action, t_logp, t_value, t_reward, t_done, t_finished = traj
            _, last_value = net.apply(params, obs)
            values = jnp.concatenate([t_value, last_value[None]])
            deltas = t_reward + GAMMA * (1 - t_done) * values[1:] - values[:-1]

            def back(adv, x):
                delta, done = x
                adv = delta + GAMMA * LAMBDA * (1 - done) * adv
                return adv, adv

            _, adv = jax.lax.scan(back, jnp.zeros(NUM_ENVS), (deltas, t_done), reverse=True)
            batch = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])),
                                 (t_obs, t_action, t_logp, adv, adv + t_value, t_value))
            size = NUM_ENVS * NUM_STEPS

            def epoch(carry, epoch_key):
                order = jax.random.permutation(epoch_key, size)
                mbs = jax.tree.map(lambda x: x[order].reshape((MINIBATCHES, -1, *x.shape[1:])),
                                   batch)

                def minibatch(carry, mb):
                    params, opt_state = carry
                    grads = jax.grad(loss_fn)(params, *mb)
                    updates, opt_state = tx.update(grads, opt_state, params)
                    return (optax.apply_updates(params, updates), opt_state), None

                return jax.lax.scan(minibatch, carry, mbs)[0], None

            (params, opt_state), _ = jax.lax.scan(epoch, (params, opt_state),
                                                  jax.random.split(shuffle_key, EPOCHS))
            stats = (t_finished.sum(), (t_finished != 0).sum())
            return (params, opt_state, env_state, obs, ep_ret), stats

        carry = (params, opt_state, env_state, obs, jnp.zeros(NUM_ENVS))
        carry, (returns, episodes) = jax.lax.scan(update, carry,
                                                  jax.random.split(key, num_updates))
        return carry[0], returns, episodes

    return jax.jit(train)
