"""The MuJoCo family's spec: its compiled module (loaded on the first spec made: libmujoco
comes from the installed `mujoco` wheel, loaded here without importing the `mujoco` Python
package, which takes a third of a second) and the spec of a task made with Gymnasium's
keyword arguments."""

from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import os
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np

from components.envs.engine import compiled_module
from components.envs.engine.spec import EnvSpec
from components.envs.mujoco.tasks import core_config


@functools.cache
def compiled() -> ModuleType:
    """`components.envs.mujoco._tasks`, after loading the wheel's libmujoco that it links."""
    found = importlib.util.find_spec("mujoco")
    if found is None or not found.submodule_search_locations:
        raise ImportError("the MuJoCo environments need the mujoco wheel: pip install mujoco")
    libraries = glob.glob(os.path.join(list(found.submodule_search_locations)[0],
                                       "libmujoco.so.*"))
    if libraries:  # by soname, so that the module's link to it resolves to this one
        ctypes.CDLL(sorted(libraries)[-1], mode=ctypes.RTLD_GLOBAL)
    return compiled_module("components.envs.mujoco._tasks", __file__)


def make_spec(env_id: str, kwargs: dict[str, Any]) -> EnvSpec:
    """A MuJoCo task made with Gymnasium's keyword arguments: Gymnasium's spaces (float64
    observations, float32 actions bounded by the actuators' control ranges); its physical
    state is qpos then qvel (`reset(options={"qpos": ..., "qvel": ...})` sets them)."""
    path, config = core_config(env_id, kwargs)
    task = compiled().MujocoTask(env_id, {**config, "xml_file": path})
    bounds = np.asarray(task.info["ctrl_range"], np.float32).reshape(-1, 2)
    observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (task.obs_dim,), np.float64)
    action_space = gymnasium.spaces.Box(bounds[:, 0], bounds[:, 1], dtype=np.float32)
    return EnvSpec(env_id, observation_space, action_space, int(task.max_steps), task,
                   physical_options=(("qpos", int(task.info["nq"])),
                                     ("qvel", int(task.info["nv"]))))


def mujoco_version() -> str:
    """The version of the libmujoco the tasks run on."""
    return compiled().MUJOCO_VERSION
