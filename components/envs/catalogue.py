"""Every native environment, classic control and MuJoCo, behind one id: `native_id` and the
host pool `make`, so that callers (the `Environment` component, the trainer, evaluation) need
not know which family an id belongs to."""

from __future__ import annotations

from typing import Any

from components.envs.mujoco.tasks import MUJOCO_IDS, is_mujoco, task_id
from components.envs.mujoco.vector_env import MujocoVectorEnv
from components.envs.mujoco.vector_env import make as make_mujoco
from components.envs.specs import SPECS, spec
from components.envs.vector_env import NativeVectorEnv
from components.envs.vector_env import make as make_classic


def native_id(env_id: str) -> str:
    """`env_id` without the `metagraph/` namespace. Raises ValueError naming every native
    environment when it is none of them (TypeError when it is not a str)."""
    if is_mujoco(env_id):
        return task_id(env_id)
    try:
        return spec(env_id).env_id
    except ValueError:
        raise ValueError(f"unknown environment {env_id!r}; native environments: "
                         f"{sorted(SPECS) + list(MUJOCO_IDS)}") from None


def make(env_id: str, num_envs: int = 1, seed: int | None = 0, num_threads: int = 1,
         **kwargs: Any) -> NativeVectorEnv | MujocoVectorEnv:
    """The host pool (a `gymnasium.vector.VectorEnv` stepped by `num_threads` C++ threads) of
    `num_envs` environments of any native id; `kwargs` are a MuJoCo task's Gymnasium keyword
    arguments (`ctrl_cost_weight`, ...), which classic control does not take."""
    if is_mujoco(env_id):
        return make_mujoco(env_id, num_envs, seed, num_threads, **kwargs)
    refuse_keyword_arguments(env_id, kwargs)
    return make_classic(env_id, num_envs, seed, num_threads)


def refuse_keyword_arguments(env_id: str, kwargs: dict[str, Any]) -> None:
    """A TypeError when keyword arguments are given to a classic-control environment: only the
    MuJoCo tasks take keyword arguments (Gymnasium's, `forward_reward_weight`, ...)."""
    if kwargs:
        raise TypeError(f"{native_id(env_id)} takes no keyword arguments (only the MuJoCo tasks "
                        f"take Gymnasium's, such as forward_reward_weight), got "
                        f"{sorted(kwargs)}")
