"""Native-compiled environments: classic control and Gymnasium's MuJoCo v5 tasks.

- `make(env_id, num_envs, seed=..., num_threads=...)` (any native id, classic control or
  MuJoCo; `native_id(env_id)` checks and normalises an id): the host loop, a
  `gymnasium.vector.VectorEnv` stepped by C++ threads.
- `gymnasium.make("metagraph/CartPole-v1")`, `gymnasium.make_vec("metagraph/CartPole-v1", n)`:
  registered on import.
- `make_functional(env_id, door="native" | "jax")`: pure reset/step for jit, scan and vmap,
  through the XLA FFI or the pure-JAX twin.
- `Environment(env_id, num_envs, door=...)`: any of the doors ("native", "jax", "host",
  "gymnasium") as a meta-graph component.
- `register_ffi_targets()`: registers the native cores' XLA FFI targets (idempotent; the native
  door calls it).
- `components.envs.mujoco`: Gymnasium's v5 MuJoCo tasks (HalfCheetah, Hopper, Walker2d, Ant)
  behind the same doors, registered as `metagraph/<id>` too.
"""

from __future__ import annotations

import gymnasium

from components.envs.catalogue import make, native_id
from components.envs.environment import DOORS, Environment
from components.envs.ffi_targets import register_ffi_targets
from components.envs.functional import make_functional
from components.envs.functional_env import FunctionalEnv
from components.envs.mujoco.tasks import MAX_EPISODE_STEPS, MUJOCO_IDS
from components.envs.native_functional import NativeFunctionalEnv
from components.envs.single_env import NativeEnv
from components.envs.specs import SPECS, EnvSpec, spec
from components.envs.twin_env import TwinFunctionalEnv, TwinState
from components.envs.vector_env import NativeVectorEnv

ENV_IDS = tuple(SPECS)


for _env_id, _spec in SPECS.items():
    if f"metagraph/{_env_id}" not in gymnasium.registry:
        gymnasium.register(
            id=f"metagraph/{_env_id}",
            entry_point=NativeEnv,
            # by name: Gymnasium keeps this spec on every wrapper, and it must pickle
            vector_entry_point="components.envs.vector_env:vector_entry_point",
            max_episode_steps=_spec.max_episode_steps,
            kwargs={"env_id": _env_id},
        )

# Gymnasium's v5 MuJoCo tasks (components.envs.mujoco), registered by name: their core loads
# when first made.
for _env_id in MUJOCO_IDS:
    if f"metagraph/{_env_id}" not in gymnasium.registry:
        gymnasium.register(
            id=f"metagraph/{_env_id}",
            entry_point="components.envs.mujoco.single_env:MujocoEnv",
            vector_entry_point="components.envs.mujoco.vector_env:vector_entry_point",
            max_episode_steps=MAX_EPISODE_STEPS,
            kwargs={"env_id": _env_id},
        )

__all__ = [
    "DOORS", "ENV_IDS", "MUJOCO_IDS", "EnvSpec", "Environment", "FunctionalEnv", "NativeEnv",
    "NativeFunctionalEnv", "NativeVectorEnv", "TwinFunctionalEnv", "TwinState", "make",
    "make_functional", "native_id", "register_ffi_targets", "spec",
]
