"""Gymnasium's eleven v5 MuJoCo tasks (HalfCheetah, Hopper, Walker2d, Ant, Swimmer, Humanoid,
HumanoidStandup, InvertedPendulum, InvertedDoublePendulum, Reacher, Pusher; ids "<Name>-v5") on
the engine (`mujoco_task.h` steps MuJoCo; `rules/*.h`, one class per task, say what each
observes, rewards and resets), with Gymnasium's model files, frame skips, observations,
rewards, health and termination rules, reset distributions and episode limits, behind every
door of the engine (`components.envs.make`, `make_functional`, `Environment`,
`gymnasium.make("metagraph/Hopper-v5")`), and the MJX twin of the nine tasks MJX can run
(door "jax", `mjx_env.py` over `_mjx_rules.py`: `MJX_IDS`; not the humanoids, whose models use
the PGS solver MJX lacks).

Keyword arguments are Gymnasium's (`forward_reward_weight`, `ctrl_cost_weight`,
`reset_noise_scale`, `healthy_z_range`, ...; `xml_file`, `frame_skip`), plus
`max_episode_steps`. Importing this package loads nothing compiled.
"""

from __future__ import annotations

from components.envs.engine.catalogue import register
from components.envs.mujoco.family import make_spec, mujoco_version
from components.envs.mujoco.tasks import MJX_IDS, MUJOCO_IDS, TASKS, is_mujoco


def _mjx_twin(spec):
    from components.envs.mujoco.mjx_env import MjxFunctionalEnv

    return MjxFunctionalEnv(spec)


for _env_id in MUJOCO_IDS:
    register(_env_id, make_spec, twin=_mjx_twin if _env_id in MJX_IDS else None,
             max_episode_steps=TASKS[_env_id].max_episode_steps)

__all__ = ["MJX_IDS", "MUJOCO_IDS", "TASKS", "is_mujoco", "mujoco_version"]
