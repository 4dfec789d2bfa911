"""`NativeFunctionalEnv`: the native door of the functional interface, the C++ core stepped
inside a compiled program through the XLA FFI (CPU; `vmap_method="broadcast_all"`: every
leading dimension is just more environments). Making one registers the FFI targets
(`register_ffi_targets`, idempotent)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.ffi_targets import register_ffi_targets, target_name
from components.envs.functional_env import FunctionalEnv, check_elapsed_steps, step_outputs
from metagraph.checks import positive_int


@dataclasses.dataclass(frozen=True)
class NativeFunctionalEnv(FunctionalEnv):
    """The C++ core through the XLA FFI (CPU). The state is opaque, uint32[..., rows, n, 2]:
    the core's structure of arrays (one row of n float64 per physical coordinate, then the n
    random streams and the n step counts, each an 8-byte word). Environment i of
    `reset(PRNGKey(s), n)` draws from the stream of (s, i), as environment i of the host pool
    `make(..., seed=s)` does."""

    door: ClassVar[str] = "native"
    num_threads: int = 1  # C++ threads stepping inside the program (results do not change)

    def __post_init__(self) -> None:
        positive_int(self.num_threads, f"{self.env_spec.env_id} (native door): num_threads")
        register_ffi_targets()

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
        return jax.ffi.ffi_call(target_name(self.env_spec.env_id, "reset"), outputs,
                                vmap_method="broadcast_all")(key)

    def _step(self, state: jax.Array, action: jax.Array) -> tuple:
        state = jnp.asarray(state)
        n_shape = self._batch_shape(state)
        outputs = step_outputs(state.shape, n_shape, self.obs_dim)
        return jax.ffi.ffi_call(target_name(self.env_spec.env_id, "step"), outputs,
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
