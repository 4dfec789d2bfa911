"""Gymnasium's v5 MuJoCo locomotion tasks (HalfCheetah-v5, Hopper-v5, Walker2d-v5, Ant-v5) on
MuJoCo's C API, with Gymnasium's model files, frame skips, observations, rewards, health and
termination rules, reset noise and 1000-step truncation.

- `make(env_id, num_envs, seed=..., num_threads=..., **kwargs)`: the host loop, a
  `gymnasium.vector.VectorEnv` stepped by C++ threads (one persistent `mjData` each);
- `gymnasium.make("metagraph/Hopper-v5", **kwargs)`, `gymnasium.make_vec(...)`: registered
  when `components.envs` is imported;
- `make_mujoco_functional(env_id, num_threads, **kwargs)`: pure reset/step through the XLA FFI,
  the state being MuJoCo's integration state as XLA buffers;
- `make_mjx_functional(env_id, **kwargs)`: the pure-JAX twin on MJX (`metagraph-rl[mjx]`), the
  same tasks stepped by `mjx.step` in float32, for accelerators;
- `Environment("Hopper-v5", n, door="native" | "jax" | "host", **kwargs)`: any door as a
  meta-graph component.

`kwargs` are Gymnasium's keyword arguments of the task (`forward_reward_weight`,
`ctrl_cost_weight`, `reset_noise_scale`, `healthy_z_range`, ...), plus `max_episode_steps`.
"""

from __future__ import annotations

from components.envs.mujoco.functional import (
    MujocoFunctionalEnv,
    make_mujoco_functional,
    register_mujoco_ffi_targets,
)
from components.envs.mujoco.mjx_env import MjxFunctionalEnv, MjxState, make_mjx_functional
from components.envs.mujoco.single_env import MujocoEnv
from components.envs.mujoco.specs import MUJOCO_VERSION, MujocoSpec, mujoco_spec
from components.envs.mujoco.tasks import MUJOCO_IDS, TASKS, is_mujoco
from components.envs.mujoco.vector_env import MujocoVectorEnv, make

__all__ = [
    "MUJOCO_IDS", "MUJOCO_VERSION", "TASKS", "MjxFunctionalEnv", "MjxState", "MujocoEnv",
    "MujocoFunctionalEnv", "MujocoSpec", "MujocoVectorEnv", "is_mujoco", "make",
    "make_mjx_functional", "make_mujoco_functional", "mujoco_spec", "register_mujoco_ffi_targets",
]
