"""The reference scripts' common last step: a trained policy's greedy return over 100
episodes of its gymnax environment, as `metagraph evaluate` scores ours (each episode to its
end or the environment's time limit)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def greedy_return(scores, env, env_params, params, rng, episodes=100):
    """The undiscounted return of `argmax scores(params, obs)` (Q-values or logits) in each of
    `episodes` episodes, [episodes]."""
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(rng, episodes),
                                                        env_params)

    def body(carry, key):
        obs, state, total, alive = carry
        action = jnp.argmax(scores(params, obs), -1)
        obs, state, reward, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(key, episodes), state, action, env_params)
        total = total + reward * alive
        return (obs, state, total, alive & ~(term | trunc)), None

    steps = int(env_params.max_steps_in_episode) + 1
    (_, _, total, _), _ = jax.lax.scan(
        body, (obs, state, jnp.zeros(episodes), jnp.ones(episodes, bool)),
        jax.random.split(rng, steps))
    return total
