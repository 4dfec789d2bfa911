"""The in-graph door: pure `reset` / `step` functions backed by the C++ core through the XLA
FFI, usable under `jax.jit`, `lax.scan` and `jax.vmap` (vmap_method="broadcast_all": every
leading dimension is just more environments). A rollout of T steps over N environments is one
compiled program with no Python in the loop.

    env = make_functional("CartPole-v1")
    state, obs = env.reset(jax.random.PRNGKey(0), num_envs=16)
    state, obs, reward, terminated, truncated = env.step(state, actions)

The state is opaque (uint32[N, words]: the core's slots, physics in float64); read the physics
with `physical_state(state)` and start from exact physical states with `state_from_physical`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
    env_spec: EnvSpec

    @property
    def obs_dim(self) -> int:
        return int(self.env_spec.observation_space.shape[0])

    def reset(self, key: jax.Array, num_envs: int) -> tuple[jax.Array, jax.Array]:
        """Initial states of `num_envs` environments; environment i draws from the stream of
        (seed, i) where the seed is the key's 64 bits (`PRNGKey(s)` matches `make(..., seed=s)`)."""
        if jnp.issubdtype(jnp.asarray(key).dtype, jax.dtypes.prng_key):
            key = jax.random.key_data(key)
        key = jnp.asarray(key)
        if key.dtype != jnp.uint32 or key.shape[-1:] != (2,):
            raise TypeError(f"{self.env_spec.env_id}.reset: key must be a raw PRNG key "
                            f"uint32[2], got {key.dtype}{list(key.shape)}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"{self.env_spec.env_id}.reset: num_envs must be a positive int")
        lead = key.shape[:-1]
        outputs = (jax.ShapeDtypeStruct(lead + (num_envs, self.env_spec.state_words), jnp.uint32),
                   jax.ShapeDtypeStruct(lead + (num_envs, self.obs_dim), jnp.float32))
        return jax.ffi.ffi_call(_target(self.env_spec.env_id, "reset"), outputs,
                                vmap_method="broadcast_all")(key)

    def step_with_final_obs(self, state: jax.Array, action: jax.Array) -> tuple:
        """`step`, also returning the last observation of episodes that ended this step."""
        state = jnp.asarray(state)
        action = jnp.asarray(action)
        n_shape = state.shape[:-1]
        want_shape = n_shape if self.env_spec.discrete else n_shape + (1,)
        want_dtype = self.env_spec.action_dtype
        if state.dtype != jnp.uint32 or state.shape[-1:] != (self.env_spec.state_words,):
            raise TypeError(f"{self.env_spec.env_id}.step: state must come from reset "
                            f"(uint32[..., {self.env_spec.state_words}]), got "
                            f"{state.dtype}{list(state.shape)}")
        if action.shape != want_shape or action.dtype != want_dtype:
            raise TypeError(f"{self.env_spec.env_id}.step: expected actions "
                            f"{np.dtype(want_dtype).name}{list(want_shape)}, got "
                            f"{action.dtype}{list(action.shape)}")
        obs = jax.ShapeDtypeStruct(n_shape + (self.obs_dim,), jnp.float32)
        flag = jax.ShapeDtypeStruct(n_shape, jnp.bool_)
        outputs = (jax.ShapeDtypeStruct(state.shape, jnp.uint32), obs,
                   jax.ShapeDtypeStruct(n_shape, jnp.float32), flag, flag, obs)
        return jax.ffi.ffi_call(_target(self.env_spec.env_id, "step"), outputs,
                                vmap_method="broadcast_all",
                                input_output_aliases={0: 0})(state, action)

    def step(self, state: jax.Array, action: jax.Array) -> tuple:
        """(state', obs, reward, terminated, truncated) with same-step auto-reset."""
        return self.step_with_final_obs(state, action)[:5]

    def physical_state(self, state: Any) -> np.ndarray:
        """The physics of each environment (Gymnasium's layout, float64), read on the host."""
        words = np.ascontiguousarray(np.asarray(state), np.uint32)
        return words.view(np.float64)[..., : self.env_spec.state_dim].copy()

    def state_from_physical(self, physics: Any, seed: int = 0) -> np.ndarray:
        """An opaque state that starts each environment from the given physical state."""
        physics = np.asarray(physics, np.float64)
        num_envs = physics.shape[0] if physics.ndim == 2 else 1
        physics = check_physical_state(self.env_spec, physics, num_envs)
        words = np.zeros((num_envs, self.env_spec.state_words), np.uint32)
        view = words.view(np.float64)
        view[:, : self.env_spec.state_dim] = physics
        streams = np.random.default_rng(seed).integers(0, 2**63, num_envs, dtype=np.int64)
        view[:, self.env_spec.state_dim] = streams.view(np.float64)  # the rng word, bit for bit
        return words


def make_functional(env_id: str, backend: str = "native") -> FunctionalEnv:
    """The functional interface of a native environment. `backend="native"` steps the C++ core
    through the XLA FFI (CPU)."""
    if backend != "native":
        raise ValueError(f"make_functional: backend must be 'native' (the pure-JAX twin is not "
                         f"built yet), got {backend!r}")
    return FunctionalEnv(spec(env_id))
