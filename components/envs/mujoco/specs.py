"""The compiled MuJoCo core (`components.envs._mujoco`), its models and their specs.

`libmujoco` comes from the installed `mujoco` wheel: it is loaded here (without importing the
`mujoco` Python package, which takes a third of a second) before the core that links it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import importlib.util
import os
import threading
from typing import Any

import gymnasium
import numpy as np

from components.envs.mujoco.tasks import core_config, task_id
from components.envs.specs import EnvSpec


def _load_libmujoco() -> None:
    found = importlib.util.find_spec("mujoco")
    if found is None or not found.submodule_search_locations:
        raise ImportError("the MuJoCo environments need the mujoco wheel: pip install mujoco")
    libraries = glob.glob(os.path.join(list(found.submodule_search_locations)[0],
                                       "libmujoco.so.*"))
    if libraries:  # by soname, so that the core's link to it resolves to this one
        ctypes.CDLL(sorted(libraries)[-1], mode=ctypes.RTLD_GLOBAL)


_load_libmujoco()
try:
    import components.envs._mujoco as _mujoco
except ModuleNotFoundError as error:
    if error.name != "components.envs._mujoco":
        raise
    raise ImportError(
        "metagraph: the compiled MuJoCo environments (components.envs._mujoco) are not built; "
        "build them with `pip install -e .`") from None

MUJOCO_VERSION: str = _mujoco.MUJOCO_VERSION
FFI_RESET = _mujoco.ffi_reset
FFI_STEP = _mujoco.ffi_step

_models: dict[tuple, Any] = {}
_models_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class MujocoSpec(EnvSpec):
    """A MuJoCo task made with given keyword arguments: Gymnasium's spaces (float64
    observations, float32 actions bounded by the actuators' control ranges), the core's model
    (`model`, shared by every pool and program of these arguments) and the arguments."""

    model: Any = None
    kwargs: tuple = ()

    def __reduce__(self) -> tuple:
        """Pickled by id and arguments: unpickling loads (or finds) the model again."""
        return _spec_from_items, (self.env_id, self.kwargs)

    @property
    def nu(self) -> int:
        """The number of actuators (the length of one action)."""
        return int(self.model.nu)


def model(env_id: str, **kwargs: Any) -> Any:
    """The core's model of `env_id` with Gymnasium's keyword arguments, loaded once per distinct
    arguments (a compiled program names it by number, so it lives as long as the process)."""
    key = (task_id(env_id), frozen(kwargs))
    with _models_lock:
        if key not in _models:
            number, path, config = core_config(env_id, kwargs)
            _models[key] = _mujoco.Model(number, path, config)
        return _models[key]


def mujoco_spec(env_id: str, **kwargs: Any) -> MujocoSpec:
    """The spec of MuJoCo task `env_id` made with Gymnasium's keyword arguments `kwargs`."""
    core = model(env_id, **kwargs)
    bounds = core.ctrl_range().astype(np.float32)
    observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (core.obs_dim,), np.float64)
    action_space = gymnasium.spaces.Box(bounds[:, 0], bounds[:, 1], dtype=np.float32)
    return MujocoSpec(task_id(env_id), observation_space, action_space,
                      int(core.max_episode_steps), core.nq + core.nv, core.record_words,
                      _mujoco.Pool, FFI_RESET, FFI_STEP, core, frozen(kwargs))


def frozen(kwargs: dict[str, Any]) -> tuple:
    """Keyword arguments as a sorted, hashable tuple of items (lists become tuples)."""
    return tuple(sorted((name, tuple(value) if isinstance(value, list | np.ndarray) else value)
                        for name, value in kwargs.items()))


def _spec_from_items(env_id: str, items: tuple) -> MujocoSpec:
    return mujoco_spec(env_id, **dict(items))
