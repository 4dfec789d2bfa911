"""Gymnasium's eleven v5 MuJoCo tasks: their ids, model files (read from the installed
Gymnasium's assets, never copied), frame skips, episode limits and documented keyword
arguments.

Importing this module loads nothing compiled: `is_mujoco(env_id)` is cheap enough for the
doors to ask before they pick a core.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class Task:
    """One task: Gymnasium's model file, frame skip and episode limit (its registration's
    max_episode_steps), and the defaults of the keyword arguments its v5 constructor
    documents (the C++ core's rules for the task read exactly these: rules/*.h)."""

    xml_file: str
    frame_skip: int
    max_episode_steps: int
    defaults: dict[str, Any]


_HUMANOID_BODY = {
    "reset_noise_scale": 1e-2, "exclude_current_positions_from_observation": True,
    "include_cinert_in_observation": True, "include_cvel_in_observation": True,
    "include_qfrc_actuator_in_observation": True, "include_cfrc_ext_in_observation": True}

TASKS: dict[str, Task] = {
    "HalfCheetah-v5": Task("half_cheetah.xml", 5, 1000, {
        "forward_reward_weight": 1.0, "ctrl_cost_weight": 0.1, "reset_noise_scale": 0.1,
        "exclude_current_positions_from_observation": True}),
    "Hopper-v5": Task("hopper.xml", 4, 1000, {
        "forward_reward_weight": 1.0, "ctrl_cost_weight": 1e-3, "healthy_reward": 1.0,
        "terminate_when_unhealthy": True, "healthy_state_range": (-100.0, 100.0),
        "healthy_z_range": (0.7, math.inf), "healthy_angle_range": (-0.2, 0.2),
        "reset_noise_scale": 5e-3, "exclude_current_positions_from_observation": True}),
    "Walker2d-v5": Task("walker2d_v5.xml", 4, 1000, {
        "forward_reward_weight": 1.0, "ctrl_cost_weight": 1e-3, "healthy_reward": 1.0,
        "terminate_when_unhealthy": True, "healthy_z_range": (0.8, 2.0),
        "healthy_angle_range": (-1.0, 1.0), "reset_noise_scale": 5e-3,
        "exclude_current_positions_from_observation": True}),
    "Ant-v5": Task("ant.xml", 5, 1000, {
        "forward_reward_weight": 1.0, "ctrl_cost_weight": 0.5, "contact_cost_weight": 5e-4,
        "healthy_reward": 1.0, "main_body": 1, "terminate_when_unhealthy": True,
        "healthy_z_range": (0.2, 1.0), "contact_force_range": (-1.0, 1.0),
        "reset_noise_scale": 0.1, "exclude_current_positions_from_observation": True,
        "include_cfrc_ext_in_observation": True}),
    "Swimmer-v5": Task("swimmer.xml", 4, 1000, {
        "forward_reward_weight": 1.0, "ctrl_cost_weight": 1e-4, "reset_noise_scale": 0.1,
        "exclude_current_positions_from_observation": True}),
    "InvertedPendulum-v5": Task("inverted_pendulum.xml", 2, 1000, {
        "reset_noise_scale": 0.01}),
    "InvertedDoublePendulum-v5": Task("inverted_double_pendulum.xml", 5, 1000, {
        "healthy_reward": 10.0, "reset_noise_scale": 0.1}),
    "Reacher-v5": Task("reacher.xml", 2, 50, {
        "reward_dist_weight": 1.0, "reward_control_weight": 1.0}),
    "Pusher-v5": Task("pusher_v5.xml", 5, 100, {
        "reward_near_weight": 0.5, "reward_dist_weight": 1.0, "reward_control_weight": 0.1}),
    "Humanoid-v5": Task("humanoid.xml", 5, 1000, {
        "forward_reward_weight": 1.25, "ctrl_cost_weight": 0.1, "contact_cost_weight": 5e-7,
        "contact_cost_range": (-math.inf, 10.0), "healthy_reward": 5.0,
        "terminate_when_unhealthy": True, "healthy_z_range": (1.0, 2.0), **_HUMANOID_BODY}),
    "HumanoidStandup-v5": Task("humanoidstandup.xml", 5, 1000, {
        "uph_cost_weight": 1.0, "ctrl_cost_weight": 0.1, "impact_cost_weight": 0.5e-6,
        "impact_cost_range": (-math.inf, 10.0), **_HUMANOID_BODY}),
}
MUJOCO_IDS = tuple(TASKS)
# the tasks with a pure-JAX twin on MJX (door "jax", mjx_env.py): not the humanoids, whose
# models use the PGS solver, which MJX does not implement (mujoco-mjx 3.17: NotImplementedError
# mjSOL_PGS); another solver would be another physics
MJX_IDS = tuple(task for task in MUJOCO_IDS if not task.startswith("Humanoid"))

_RANGES = ("healthy_state_range", "healthy_z_range", "healthy_angle_range",
           "contact_force_range", "contact_cost_range", "impact_cost_range")
_FLAGS = ("terminate_when_unhealthy", "exclude_current_positions_from_observation",
          "include_cfrc_ext_in_observation", "include_cinert_in_observation",
          "include_cvel_in_observation", "include_qfrc_actuator_in_observation")


def is_mujoco(env_id: Any) -> bool:
    """Whether `env_id` (with or without `metagraph/`) is one of the MuJoCo tasks."""
    return isinstance(env_id, str) and env_id.removeprefix("metagraph/") in TASKS


def task_id(env_id: str) -> str:
    """`env_id` without the `metagraph/` namespace, or a ValueError naming the MuJoCo tasks."""
    key = env_id.removeprefix("metagraph/") if isinstance(env_id, str) else env_id
    if key not in TASKS:
        raise ValueError(f"unknown MuJoCo environment {env_id!r}; MuJoCo environments: "
                         f"{list(MUJOCO_IDS)}")
    return key


def assets_dir() -> str:
    """Gymnasium's MuJoCo model files (found without importing gymnasium.envs.mujoco)."""
    found = importlib.util.find_spec("gymnasium")
    if found is None or not found.submodule_search_locations:
        raise ImportError("the MuJoCo environments load Gymnasium's model files: "
                          "pip install gymnasium")
    return os.path.join(list(found.submodule_search_locations)[0], "envs", "mujoco", "assets")


def model_path(xml_file: str) -> str:
    """Gymnasium's expand_model_path: a path starting with '.', '/' or '~' as given, else a
    file of Gymnasium's assets."""
    if xml_file.startswith((".", "/")):
        path = xml_file
    elif xml_file.startswith("~"):
        path = os.path.expanduser(xml_file)
    else:
        path = os.path.join(assets_dir(), xml_file)
    if not os.path.exists(path):
        raise OSError(f"File {path} does not exist")
    return os.path.abspath(path)


def core_config(env_id: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(model path, the core's config: "task", then the task's own keyword arguments) for
    `env_id` made with Gymnasium's keyword arguments `kwargs` (plus `max_episode_steps`). Each
    value is checked here, naming the argument: unknown ones are a TypeError, values of the
    wrong type a TypeError, values out of range a ValueError (NumPy scalars are taken as their
    Python values)."""
    key = task_id(env_id)
    task = TASKS[key]
    accepted = {*task.defaults, "xml_file", "frame_skip", "max_episode_steps"}
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        raise TypeError(f"{key}: unexpected keyword arguments {unknown}; accepted: "
                        f"{sorted(accepted)} (rendering is not supported)")
    given = {**task.defaults, **kwargs}
    config: dict[str, Any] = {"task": key}
    for name, value in given.items():
        if name in ("xml_file", "main_body"):
            continue
        if name in _RANGES:
            low, high = _pair(key, name, value)
            config[name] = (low, high)
        elif name in _FLAGS:
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{key}: {name} must be a bool, got {value!r}")
            config[name] = bool(value)
        elif name in _INTEGERS:
            config[name] = _integer(key, name, value, 1, _INTEGERS[name])
        else:
            config[name] = _number(key, name, value, finite=True)
    config.setdefault("frame_skip", task.frame_skip)
    config.setdefault("max_episode_steps", task.max_episode_steps)
    if "main_body" in task.defaults:  # Ant: a body's number or name
        main_body = given["main_body"]
        if isinstance(main_body, str):
            config["main_body"], config["main_body_name"] = 0, main_body
        else:
            config["main_body"] = _integer(key, "main_body", main_body, 0, _MAX_BODY)
            config["main_body_name"] = ""
    xml_file = given.get("xml_file", task.xml_file)
    if not isinstance(xml_file, str | os.PathLike):
        raise TypeError(f"{key}: xml_file must be a path (str), got {xml_file!r}")
    return model_path(os.fspath(xml_file)), config


_INTEGERS = {"frame_skip": 10**6, "max_episode_steps": 2**31 - 1}
_MAX_BODY = 10**6


def _integer(env_id: str, name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{env_id}: {name} must be an int, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{env_id}: {name} must be in [{low}, {high}], got {value!r}")
    return int(value)


def _number(env_id: str, name: str, value: Any, finite: bool = False) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{env_id}: {name} must be a number, got {value!r}")
    try:
        x = float(value)
    except OverflowError:
        raise ValueError(f"{env_id}: {name} is out of range for a float64, got {value!r}") from None
    if math.isnan(x):
        raise ValueError(f"{env_id}: {name} must not be NaN")
    if finite and math.isinf(x):
        raise ValueError(f"{env_id}: {name} must be finite, got {value!r}")
    return x


def _pair(env_id: str, name: str, value: Any) -> tuple[float, float]:
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"{env_id}: {name} must be a pair (low, high), got {value!r}") from None
    low, high = _number(env_id, name, low), _number(env_id, name, high)
    if low > high:
        raise ValueError(f"{env_id}: {name} must be a pair (low, high) with low <= high, got "
                         f"{value!r}")
    return low, high
