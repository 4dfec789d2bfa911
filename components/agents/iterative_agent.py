"""`IterativeAgent`: an agent over `config.num_envs` environments whose
`train(key, iterations)` API runs up to `config.iterations_per_call` whole training iterations
(`_iteration(key)`, defined by the subclass) in one executable: the first `iterations` of them,
the others skipped (so a run does exactly the iterations it asks for, with one executable);
`start(key)` resets the environments first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from components.envs import Environment


class IterativeAgent(mg.Component):
    def __init__(self, env_id: str, config: Any, name: str | None = None):
        super().__init__(name)
        self.config = config
        self.env = Environment(env_id, config.num_envs, backend=config.backend)

    def _episodes(self) -> tuple[jax.Array, jax.Array]:
        """The current observations and the returns of the running episodes."""
        n, shape = self.config.num_envs, self.env.observation_space.shape
        return (self.get_state("obs", jnp.zeros((n, *shape), jnp.float32)),
                self.get_state("episode_return", jnp.zeros((n,), jnp.float32)))

    def _run_envs(self, act: Callable, key: jax.Array, steps: int) -> tuple[tuple, jax.Array]:
        """`steps` steps of every environment, continuing their episodes, with actions from
        `act(obs, key) -> (action, extra)`, as one fused scan. Returns the trajectory
        (obs, action, extra, reward, done, finished return or 0), each [steps, N, ...], and the
        observations after the last step."""
        functional = self.env.functional
        obs, episode_return = self._episodes()

        def step(carry, step_key):
            env_state, obs, episode_return = carry
            action, extra = act(obs, step_key)
            env_state, next_obs, reward, terminated, truncated, _ = \
                functional.step_with_final_obs(env_state, action)
            done = terminated | truncated
            episode_return = episode_return + reward
            finished = jnp.where(done, episode_return, 0.0)
            episode_return = jnp.where(done, 0.0, episode_return)
            record = (obs, action, extra, reward, done, finished)
            return (env_state, next_obs, episode_return), record

        carry = (self.env.read_state(), obs, episode_return)
        (env_state, last_obs, episode_return), trajectory = mg.scan(
            step, carry, jax.random.split(key, steps))
        self.env.write_state(env_state)
        self.set_state("obs", last_obs)
        self.set_state("episode_return", episode_return)
        return trajectory, last_obs

    @staticmethod
    def steps_per_iteration(config: Any) -> int:
        """Environment steps per iteration (all environments together)."""
        raise NotImplementedError

    def _iteration(self, key: jax.Array) -> dict[str, jax.Array]:
        raise NotImplementedError

    @mg.api
    def start(self, key):
        obs = self.env.reset(key)
        self._episodes()
        self.set_state("obs", obs)
        self.set_state("episode_return", jnp.zeros((self.config.num_envs,), jnp.float32))
        return obs

    @mg.api
    def train(self, key, iterations):
        """The first `iterations` of `iterations_per_call` (K) iterations; per-iteration
        statistics [K], zeros for the skipped ones. Iteration k uses the k-th of K keys split
        from `key`, whatever `iterations` is. Its space is Discrete(K + 1) (an int32 scalar;
        the dtype and shape are checked): a value above K runs all K, one below 1 none."""
        count = self.config.iterations_per_call

        def one(_, xs):
            index, iteration_key = xs
            return None, mg.cond(index < iterations, self._iteration, None, iteration_key)

        return mg.scan(one, None, (jnp.arange(count), jax.random.split(key, count)))[1]
