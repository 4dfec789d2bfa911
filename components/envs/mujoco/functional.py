"""`MujocoFunctionalEnv`: the in-graph door of the MuJoCo tasks, MuJoCo stepped inside a
compiled program through the XLA FFI (CPU).

The state is XLA buffers, uint32[..., n, W, 2]: environment i's record of W 8-byte words,
MuJoCo's own integration state (`mj_getState` with mjSTATE_INTEGRATION: time, qpos, qvel, act,
the warm start, ctrl, applied forces, ...), then the position the next step's velocity is
measured from, the random stream and the step count. A step loads each record into a scratch
`mjData` (`mj_setState`), steps it with the host pool's code and saves it back, so stepping in
the graph gives the bits a persistent `mjData` gives. Observations and rewards come out as
float32 (the host pool gives Gymnasium's float64).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.functional_env import FunctionalEnv, check_elapsed_steps, step_outputs
from components.envs.mujoco.specs import FFI_RESET, FFI_STEP, MujocoSpec, mujoco_spec
from components.envs.mujoco.vector_env import MujocoVectorEnv
from metagraph.checks import positive_int

RESET_TARGET = "metagraph_mujoco_reset"
STEP_TARGET = "metagraph_mujoco_step"
_lock = threading.Lock()
_registered = False


def register_mujoco_ffi_targets() -> None:
    """Register the MuJoCo reset and step handlers with XLA (CPU), once (idempotent)."""
    global _registered
    with _lock:
        if not _registered:
            jax.ffi.register_ffi_target(RESET_TARGET, FFI_RESET, platform="cpu")
            jax.ffi.register_ffi_target(STEP_TARGET, FFI_STEP, platform="cpu")
            _registered = True


@dataclasses.dataclass(frozen=True)
class MujocoFunctionalEnv(FunctionalEnv):
    """MuJoCo through the XLA FFI: pure `reset(key, num_envs)` / `step(state, action)` for jit,
    scan and vmap. Environment i of `reset(PRNGKey(s), n)` draws from the stream of (s, i), as
    environment i of the host pool `make(..., seed=s)` does."""

    door: ClassVar[str] = "native"
    num_threads: int = 1  # C++ threads stepping inside the program (results do not change)

    def __post_init__(self) -> None:
        positive_int(self.num_threads, f"{self.env_spec.env_id} (native door): num_threads")
        register_mujoco_ffi_targets()

    @property
    def _model(self) -> Any:
        return self.env_spec.model

    def _batch_shape(self, state: Any) -> tuple[int, ...]:
        state = jnp.asarray(state)
        words = self.env_spec.state_rows
        if state.dtype != jnp.uint32 or state.ndim < 3 or state.shape[-2:] != (words, 2):
            raise TypeError(f"{self.env_spec.env_id}.step: state must come from reset "
                            f"(uint32[..., num_envs, {words}, 2]), got "
                            f"{state.dtype}{list(state.shape)}")
        return state.shape[:-2]

    def _reset(self, key: jax.Array, num_envs: int) -> tuple[jax.Array, jax.Array]:
        lead = key.shape[:-1]
        outputs = (jax.ShapeDtypeStruct(lead + (num_envs, self.env_spec.state_rows, 2),
                                        jnp.uint32),
                   jax.ShapeDtypeStruct(lead + (num_envs, self.obs_dim), jnp.float32))
        return jax.ffi.ffi_call(RESET_TARGET, outputs, vmap_method="broadcast_all")(
            key, model=np.int64(self._model.id))

    def _step(self, state: jax.Array, action: jax.Array) -> tuple:
        state = jnp.asarray(state)
        n_shape = self._batch_shape(state)
        outputs = step_outputs(state.shape, n_shape, self.obs_dim)
        return jax.ffi.ffi_call(STEP_TARGET, outputs, vmap_method="broadcast_all",
                                input_output_aliases={0: 0})(
            state, action, num_threads=np.int32(self.num_threads),
            model=np.int64(self._model.id))

    def records(self, state: Any) -> np.ndarray:
        """The environments' records as uint64[..., n, W], read on the host (the words of the
        host pool's `records()`)."""
        words = np.ascontiguousarray(np.asarray(state), np.uint32)
        return words.view(np.uint64)[..., 0]

    def physical_state(self, state: Any) -> np.ndarray:
        """Positions then velocities of each environment, float64 [..., n, nq + nv]."""
        words = self.records(state)[..., 1: 1 + self.env_spec.state_dim]  # after the time
        return np.ascontiguousarray(words).view(np.float64)

    def elapsed_steps(self, state: Any) -> np.ndarray:
        """Steps taken in each environment's current episode."""
        return self.records(state)[..., -1].astype(np.int32)

    def state_from_physical(self, physics: Any, seed: int = 0, elapsed_steps: Any = 0
                            ) -> np.ndarray:
        """A state that starts each environment from positions then velocities, (n, nq + nv)
        or (nq + nv,), as Gymnasium's reset followed by `set_state`, with `elapsed_steps` of
        its episode passed."""
        physics = self._physics_for(physics)
        num_envs = physics.shape[0]
        nq = self._model.nq
        pool = MujocoVectorEnv(self.env_spec.env_id, num_envs, seed, **dict(self.env_spec.kwargs))
        pool.reset(options={"qpos": physics[:, :nq], "qvel": physics[:, nq:]})
        records = pool.records()
        records[:, -1] = check_elapsed_steps(self.env_spec, elapsed_steps, num_envs)
        return records[..., None].view(np.uint32)


def make_mujoco_functional(env_id: str, num_threads: int = 1, **kwargs: Any
                           ) -> MujocoFunctionalEnv:
    """The in-graph door of MuJoCo task `env_id` made with Gymnasium's keyword arguments."""
    env_spec: MujocoSpec = mujoco_spec(env_id, **kwargs)
    return MujocoFunctionalEnv(env_spec, num_threads)
