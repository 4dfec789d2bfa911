"""`IterativeAgent`: an agent over `config.num_envs` environments whose
`train(key, iterations)` API runs up to `config.iterations_per_call` whole training iterations
(`_iteration(key)`, defined by the subclass) in one executable: the first `iterations` of them,
the others skipped (so a run does exactly the iterations it asks for, with one executable);
`start(key)` resets the environments first.

The environments are an `Environment` component (`self.env`, door `config.door`), stepped
through its `step` API inside `mg.scan`, so every agent's graph shows the rollout's call of
`environment.step` with its spaces, whatever the door.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from components.agents.preprocessing import check_preprocessor, preprocess
from components.envs import Environment


class IterativeAgent(mg.Component):
    """Base of the agents that train in whole iterations over `config.num_envs` environments
    (see the module docstring). `preprocessor` (optional) is applied to observations before
    the policy sees them (`components.agents.preprocessing`)."""

    def __init__(self, env_id: str, config: Any, name: str | None = None,
                 preprocessor: mg.Component | None = None):
        super().__init__(name)
        self.config = config
        self.env = Environment(env_id, config.num_envs, door=config.door)
        self.preprocessor = check_preprocessor(type(self).__name__, preprocessor)

    def observe(self, obs: jax.Array) -> jax.Array:
        """What the policy sees of rollout observations: the preprocessor's `forward`, after
        its `update` (statistics change during rollouts only)."""
        return preprocess(self.preprocessor, obs, update=True)

    def preprocess(self, obs: jax.Array) -> jax.Array:
        """What the policy sees of observations outside rollouts (learning, `greedy`)."""
        return preprocess(self.preprocessor, obs)

    def _episodes(self) -> tuple[jax.Array, jax.Array]:
        """The current observations and the returns of the running episodes."""
        n, shape = self.config.num_envs, self.env.observation_space.shape
        return (self.get_state("obs", jnp.zeros((n, *shape), jnp.float32)),
                self.get_state("episode_return", jnp.zeros((n,), jnp.float32)))

    def _run_envs(self, act: Callable, key: jax.Array, steps: int,
                  keep: tuple[str, ...] = ()) -> tuple[tuple, jax.Array]:
        """`steps` steps of every environment, continuing their episodes, with actions from
        `act(obs, key) -> (action, extra)` (`obs` as the environments returned them), each an
        `env.step` call inside one `mg.scan`. Returns the trajectory (obs, action, extra,
        reward, done, finished return or 0), each [steps, N, ...], and the observations after
        the last step. `keep` names further `env.step` outputs to record ("terminated",
        "truncated", "final_obs"): a dict of them ends the trajectory."""
        obs, episode_return = self._episodes()

        def step(carry, step_key):
            obs, episode_return = carry
            action, extra = act(obs, step_key)
            out = self.env.step(action)
            reward = out["reward"]
            done = out["terminated"] | out["truncated"]
            episode_return = episode_return + reward
            finished = jnp.where(done, episode_return, 0.0)
            episode_return = jnp.where(done, 0.0, episode_return)
            record = (obs, action, extra, reward, done, finished)
            if keep:
                record = (*record, {name: out[name] for name in keep})
            return (out["obs"], episode_return), record

        (last_obs, episode_return), trajectory = mg.scan(
            step, (obs, episode_return), jax.random.split(key, steps))
        self.set_state("obs", last_obs)
        self.set_state("episode_return", episode_return)
        return trajectory, last_obs

    @staticmethod
    def steps_per_iteration(config: Any) -> int:
        """Environment steps per iteration (all environments together)."""
        raise NotImplementedError

    def _iteration(self, key: jax.Array) -> dict[str, jax.Array]:
        """One training iteration (rollout and updates); returns its statistics."""
        raise NotImplementedError

    @mg.api
    def start(self, key):
        """Reset every environment (from `key`); returns the first observations."""
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
