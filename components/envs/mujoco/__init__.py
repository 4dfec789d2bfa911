"""Gymnasium's v5 MuJoCo locomotion tasks (HalfCheetah-v5, Hopper-v5, Walker2d-v5, Ant-v5) on
the engine (`locomotion.h` over `task.h`), with Gymnasium's model files, frame skips,
observations, rewards, health and termination rules, reset noise and 1000-step truncation,
behind every door of the engine (`components.envs.make`, `make_functional`, `Environment`,
`gymnasium.make("metagraph/Hopper-v5")`), and the MJX twin (door "jax", `mjx_env.py`).

Keyword arguments are Gymnasium's (`forward_reward_weight`, `ctrl_cost_weight`,
`reset_noise_scale`, `healthy_z_range`, ...; `xml_file`, `frame_skip`), plus
`max_episode_steps`. Importing this package loads nothing compiled.
"""

from __future__ import annotations

from components.envs.engine.catalogue import register
from components.envs.mujoco.family import make_spec, mujoco_version
from components.envs.mujoco.tasks import MAX_EPISODE_STEPS, MUJOCO_IDS, TASKS, is_mujoco


def _mjx_twin(spec):
    from components.envs.mujoco.mjx_env import MjxFunctionalEnv

    return MjxFunctionalEnv(spec)


for _env_id in MUJOCO_IDS:
    register(_env_id, make_spec, twin=_mjx_twin, max_episode_steps=MAX_EPISODE_STEPS)

__all__ = ["MUJOCO_IDS", "TASKS", "is_mujoco", "mujoco_version"]
