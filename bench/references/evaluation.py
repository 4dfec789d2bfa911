"""The reference scripts' common part: their command line and seed loop (`run_seeds`), and
a trained policy's greedy return over 100 episodes of its gymnax environment, as `metagraph
evaluate` scores ours (each episode to its end or the environment's time limit)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp


def run_seeds(description: str, make_train: Callable[[dict], tuple],
              recipe: Callable[[str], dict]) -> None:
    """`SCRIPT ENV --steps N --seeds S ...`: for each seed, `make_train(config)` (config the
    env's `recipe` with TOTAL_TIMESTEPS and ENV_NAME) gives (train, scores, env, env_params);
    `train(key)` is jitted and run, start-up and compilation counted as in our runs, and one
    JSON line printed: {"seed", "train_s", "greedy_return", "episodes"}."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("env", help="gymnax's id: CartPole-v1, Breakout-MinAtar, ...")
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    for seed in args.seeds:
        config = {**recipe(args.env), "TOTAL_TIMESTEPS": args.steps, "ENV_NAME": args.env}
        start = time.perf_counter()
        train, scores, env, env_params = make_train(config)
        params = jax.block_until_ready(jax.jit(train)(jax.random.PRNGKey(seed)))
        train_s = time.perf_counter() - start
        returns = greedy_return(scores, env, env_params, params, jax.random.PRNGKey(100 + seed))
        print(json.dumps({"seed": seed, "train_s": round(train_s, 2),
                          "greedy_return": float(returns.mean()),
                          "episodes": int(returns.shape[0])}), flush=True)


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
