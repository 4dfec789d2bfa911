"""The in-graph door: pure `reset` / `step` functions, usable under `jax.jit`, `lax.scan` and
`jax.vmap`, with two backends behind one interface:

- "native": the C++ core through the XLA FFI (CPU; vmap_method="broadcast_all": every leading
  dimension is just more environments);
- "jax": the pure-JAX twin (`twin_env.py`), for accelerators where a host round trip would
  dominate.

A rollout of T steps over N environments is one compiled program with no Python in the loop.

    env = make_functional("CartPole-v1")          # or backend="jax"
    state, obs = env.reset(jax.random.PRNGKey(0), num_envs=16)
    state, obs, reward, terminated, truncated = env.step(state, actions)

The state is opaque (a backend's own pytree); read the physics with `physical_state(state)` and
start from exact physical states with `state_from_physical`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.actions import check_physical_state
from components.envs.specs import SPECS, EnvSpec, spec


def _target(env_id: str, what: str) -> str:
    return f"metagraph_{env_id.replace('-', '_')}_{what}"


for _env_id, _spec in SPECS.items():
    jax.ffi.register_ffi_target(_target(_env_id, "reset"), _spec.ffi_reset, platform="cpu")
    jax.ffi.register_ffi_target(_target(_env_id, "step"), _spec.ffi_step, platform="cpu")


@dataclasses.dataclass(frozen=True)
class FunctionalEnv:
    """The functional interface shared by both backends: argument checks and the API; a
    backend supplies `_reset`, `_step`, `physical_state` and `state_from_physical`."""

    env_spec: EnvSpec
    backend: ClassVar[str] = ""

    @property
    def obs_dim(self) -> int:
        return int(self.env_spec.observation_space.shape[0])

    def reset(self, key: jax.Array, num_envs: int) -> tuple[Any, jax.Array]:
        """Initial states of `num_envs` environments, one random stream per environment index.
        Leading axes of `key` (from vmap or a batch of keys) are more groups of environments."""
        if jnp.issubdtype(jnp.asarray(key).dtype, jax.dtypes.prng_key):
            key = jax.random.key_data(key)
        key = jnp.asarray(key)
        if key.dtype != jnp.uint32 or key.shape[-1:] != (2,):
            raise TypeError(f"{self.env_spec.env_id}.reset: key must be a raw PRNG key "
                            f"uint32[2], got {key.dtype}{list(key.shape)}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"{self.env_spec.env_id}.reset: num_envs must be a positive int")
        return self._reset(key, num_envs)

    def step_with_final_obs(self, state: Any, action: jax.Array) -> tuple:
        """`step`, also returning the last observation of episodes that ended this step."""
        action = jnp.asarray(action)
        n_shape = self._batch_shape(state)
        want_shape = n_shape if self.env_spec.discrete else n_shape + (1,)
        want_dtype = self.env_spec.action_dtype
        if action.shape != want_shape or action.dtype != want_dtype:
            raise TypeError(f"{self.env_spec.env_id}.step: expected actions "
                            f"{np.dtype(want_dtype).name}{list(want_shape)}, got "
                            f"{action.dtype}{list(action.shape)}")
        return self._step(state, action)

    def step(self, state: Any, action: jax.Array) -> tuple:
        """(state', obs, reward, terminated, truncated) with same-step auto-reset."""
        return self.step_with_final_obs(state, action)[:5]

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        raise NotImplementedError

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[Any, jax.Array]:
        raise NotImplementedError

    def _step(self, state: Any, action: jax.Array) -> tuple:
        raise NotImplementedError

    def _physics_for(self, physics: Any) -> np.ndarray:
        physics = np.asarray(physics, np.float64)
        num_envs = physics.shape[0] if physics.ndim == 2 else 1
        return check_physical_state(self.env_spec, physics, num_envs)


@dataclasses.dataclass(frozen=True)
class NativeFunctionalEnv(FunctionalEnv):
    """The C++ core through the XLA FFI (CPU). The state is opaque, uint32[..., rows, n, 2]:
    the core's structure of arrays (one row of n float64 per physical coordinate, then the n
    random streams and the n step counts, each an 8-byte word). Environment i of
    `reset(PRNGKey(s), n)` draws from the stream of (s, i), as environment i of the host pool
    `make(..., seed=s)` does."""

    backend: ClassVar[str] = "native"
    num_threads: int = 1  # C++ threads stepping inside the program (results do not change)

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        state = jnp.asarray(state)
        rows = self.env_spec.state_rows
        if state.dtype != jnp.uint32 or state.ndim < 3 or state.shape[-1] != 2 \
                or state.shape[-3] != rows:
            raise TypeError(f"{self.env_spec.env_id}.step: state must come from reset "
                            f"(uint32[..., {rows}, num_envs, 2]), got "
                            f"{state.dtype}{list(state.shape)}")
        return state.shape[:-3] + state.shape[-2:-1]

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[jax.Array, jax.Array]:
        lead = key.shape[:-1]
        rows = self.env_spec.state_rows
        outputs = (jax.ShapeDtypeStruct(lead + (rows, num_envs, 2), jnp.uint32),
                   jax.ShapeDtypeStruct(lead + (num_envs, self.obs_dim), jnp.float32))
        return jax.ffi.ffi_call(_target(self.env_spec.env_id, "reset"), outputs,
                                vmap_method="broadcast_all")(key)

    def _step(self, state: jax.Array, action: jax.Array) -> tuple:
        state = jnp.asarray(state)
        n_shape = self._batch_shape(state)
        obs = jax.ShapeDtypeStruct(n_shape + (self.obs_dim,), jnp.float32)
        flag = jax.ShapeDtypeStruct(n_shape, jnp.bool_)
        outputs = (jax.ShapeDtypeStruct(state.shape, jnp.uint32), obs,
                   jax.ShapeDtypeStruct(n_shape, jnp.float32), flag, flag, obs)
        return jax.ffi.ffi_call(_target(self.env_spec.env_id, "step"), outputs,
                                vmap_method="broadcast_all",
                                input_output_aliases={0: 0})(
            state, action, num_threads=np.int32(self.num_threads))

    def _rows(self, state: Any) -> np.ndarray:
        """The state's rows as 8-byte words, (..., rows, n) uint64, read on the host."""
        words = np.ascontiguousarray(np.asarray(state), np.uint32)
        return words.view(np.uint64)[..., 0]

    def physical_state(self, state: Any) -> np.ndarray:
        """The physics of each environment (Gymnasium's layout, float64), read on the host."""
        physics = self._rows(state)[..., : self.env_spec.state_dim, :].view(np.float64)
        return np.ascontiguousarray(np.swapaxes(physics, -1, -2))

    def elapsed_steps(self, state: Any) -> np.ndarray:
        """Steps taken in each environment's current episode."""
        return self._rows(state)[..., self.env_spec.state_dim + 1, :].astype(np.int32)

    def state_from_physical(self, physics: Any, seed: int = 0, elapsed_steps: Any = 0
                            ) -> np.ndarray:
        """An opaque state that starts each environment from the given physical state, as if
        `elapsed_steps` of its episode had passed (to reach the time limit in tests)."""
        physics = self._physics_for(physics)
        num_envs, dim = physics.shape
        rows = np.zeros((self.env_spec.state_rows, num_envs), np.uint64)
        rows[:dim] = np.ascontiguousarray(physics.T).view(np.uint64)
        rows[dim] = np.random.default_rng(seed).integers(0, 2**63, num_envs, dtype=np.uint64)
        rows[dim + 1] = check_elapsed_steps(self.env_spec, elapsed_steps, num_envs)
        return rows.view(np.uint32).reshape(rows.shape + (2,))


def check_elapsed_steps(env_spec: EnvSpec, elapsed_steps: Any, num_envs: int) -> np.ndarray:
    steps = np.broadcast_to(np.asarray(elapsed_steps), (num_envs,))
    if steps.dtype.kind not in "iu" or steps.min() < 0 or steps.max() >= env_spec.max_episode_steps:
        raise ValueError(f"{env_spec.env_id}: elapsed_steps must be integers in "
                         f"[0, {env_spec.max_episode_steps}), got {elapsed_steps!r}")
    return steps.astype(np.int32)


def make_functional(env_id: str, backend: str = "native", num_threads: int = 1
                    ) -> FunctionalEnv:
    """The functional interface of an environment. `backend="native"` steps the C++ core
    through the XLA FFI (CPU) on `num_threads` C++ threads; `backend="jax"` runs its pure-JAX
    twin (any device)."""
    from components.envs.twin_env import TwinFunctionalEnv

    backends = {"native": NativeFunctionalEnv, "jax": TwinFunctionalEnv}
    if backend not in backends:
        raise ValueError(f"make_functional: backend must be one of {sorted(backends)}, got "
                         f"{backend!r}")
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError(f"make_functional: num_threads must be a positive int, got "
                         f"{num_threads!r}")
    if backend == "native":
        return NativeFunctionalEnv(spec(env_id), num_threads)
    return backends[backend](spec(env_id))
