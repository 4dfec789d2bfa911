"""The host-loop door: a batch of native environments stepped by C++ worker threads, offered
as a `gymnasium.vector.VectorEnv` with same-step auto-reset."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from components.envs.actions import check_actions, check_physical_state
from components.envs.specs import EnvSpec, spec
from metagraph.checks import positive_int


def check_seed(seed: Any, where: str) -> int:
    """`seed` as the core's uint64; None draws a fresh one from the operating system."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"{where}: seed must be an int or None, got {type(seed).__name__}")
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"{where}: seed must be in [0, 2**64), got {seed}")
    return int(seed)


class NativeVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` copies of a native environment. `step` returns the next observations; where
    an episode ended (terminated or truncated) that is already the next episode's first
    observation, and `info["final_obs"]` (masked by `info["_final_obs"]`) holds the last one;
    `info["final_info"]` (masked by `info["_final_info"]`) is the ended episodes' last info, as
    Gymnasium's own vector envs set it (empty: these environments report none).

    Several Python threads may call one pool at once: each call holds the pool's lock, so the
    environments end as if the calls had run one after another. A pool pickles with its whole
    state (each environment's physics, random stream and step count)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, env_id: str, num_envs: int = 1, seed: int | None = 0,
                 num_threads: int = 1):
        self.env_spec: EnvSpec = spec(env_id)
        self.num_envs = positive_int(num_envs, f"{env_id}: num_envs")
        self._pool = self.env_spec.pool_class(self.num_envs, check_seed(seed, env_id),
                                              positive_int(num_threads,
                                                           f"{env_id}: num_threads"))
        self.single_observation_space = self.env_spec.observation_space
        self.single_action_space = self.env_spec.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._action_dtype = self.env_spec.action_dtype
        self._action_shape = (self.num_envs,) if self.env_spec.discrete else (self.num_envs, 1)
        self.render_mode = None
        self.closed = False

    @property
    def num_threads(self) -> int:
        """The number of threads the native pool steps with."""
        return self._pool.num_threads

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Reset every environment: from `seed` (each environment index its own stream), or
        from an exact physical state, `options={"state": s}` in Gymnasium's layout."""
        self._check_open()
        if seed is not None:  # np_random_seed == seed, as Gymnasium's vector envs
            seed = check_seed(seed, self.env_spec.env_id)
            super().reset(seed=seed)
        if options and "state" in options:
            state = check_physical_state(self.env_spec, options["state"], self.num_envs)
            return self._pool.reset_to(state), {}
        if seed is None:  # continue each environment's own random stream
            return self._pool.reset(None), {}
        return self._pool.reset(seed), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Gymnasium's vector step with same-step auto-reset: `(obs, reward, terminated,
        truncated, info)`; a done environment's last observation is in `info["final_obs"]`."""
        # (a closed pool refuses to step by itself: no Python check on this hot path)
        if not (type(actions) is np.ndarray and actions.dtype == self._action_dtype
                and actions.shape == self._action_shape and actions.flags.c_contiguous
                and actions.flags.aligned):
            actions = check_actions(self.env_spec, actions, self.num_envs)
        # the core checks the values (range, NaN) itself before any environment moves
        obs, reward, terminated, truncated, final_obs, any_done = self._pool.step(actions)
        if any_done:
            done = terminated | truncated
            return obs, reward, terminated, truncated, {
                "final_obs": final_obs, "_final_obs": done,
                "final_info": {}, "_final_info": done.copy()}
        return obs, reward, terminated, truncated, {}

    def physical_state(self) -> np.ndarray:
        """The current physical states, (num_envs, state_dim) float64, Gymnasium's layout."""
        self._check_open()
        return self._pool.physics()

    def elapsed_steps(self) -> np.ndarray:
        """The steps each environment has taken in its current episode."""
        return self._pool.elapsed_steps()

    def close_extras(self, **kwargs: Any) -> None:
        """Release the native pool (Gymnasium's `close` calls it)."""
        self._pool.close()

    def _check_open(self) -> None:
        if self.closed or self._pool.closed:
            raise RuntimeError(f"{self.env_spec.env_id}: the environment pool is closed")


def make(env_id: str, num_envs: int = 1, seed: int | None = 0,
         num_threads: int = 1) -> NativeVectorEnv:
    """A batched pool of native environments stepped by `num_threads` C++ threads."""
    return NativeVectorEnv(env_id, num_envs, seed, num_threads)


def vector_entry_point(env_id: str, num_envs: int = 1, seed: int | None = 0,
                       num_threads: int = 1, **gymnasium_kwargs: Any) -> NativeVectorEnv:
    """`gymnasium.make_vec("metagraph/<id>", n)`: registered by name,
    "components.envs.vector_env:vector_entry_point", so that the specs Gymnasium keeps on its
    environments pickle. Gymnasium's own arguments (max_episode_steps) are the core's."""
    return NativeVectorEnv(env_id, num_envs, seed, num_threads)
