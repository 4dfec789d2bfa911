"""Checking actions before they reach the C++ core: clear errors, nothing cast silently."""

from __future__ import annotations

from typing import Any

import numpy as np

from components.envs.specs import EnvSpec


def check_actions(spec: EnvSpec, actions: Any, num_envs: int) -> np.ndarray:
    """Actions as the aligned C-contiguous array the core reads (a copy where `actions` is not
    one), or a ValueError/TypeError saying what was expected. Discrete: int32[num_envs] (any
    integer dtype whose values fit is accepted; values are checked before any cast).
    Continuous: float32[num_envs, *action_shape]; values outside the bounds are clipped by the
    dynamics as Gymnasium does; NaN and inf are errors."""
    expected_shape = (num_envs,) if spec.discrete else (num_envs, *spec.action_space.shape)
    arr = np.asarray(actions)
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{spec.env_id}: actions must be a numeric array of shape "
                        f"{expected_shape}, got dtype {arr.dtype}")
    if arr.shape != expected_shape:
        raise ValueError(f"{spec.env_id}: expected actions of shape {expected_shape}, got "
                         f"{arr.shape}")
    if spec.discrete:
        if arr.dtype.kind == "f":
            raise TypeError(f"{spec.env_id}: discrete actions must be integers, got {arr.dtype}")
        n = spec.action_space.n
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            raise ValueError(f"{spec.env_id}: actions must be in [0, {n}), got values in "
                             f"[{arr.min()}, {arr.max()}]")
        return np.require(arr, np.int32, "CA")
    if arr.dtype.kind != "f":
        raise TypeError(f"{spec.env_id}: continuous actions must be floating point, got "
                        f"{arr.dtype}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{spec.env_id}: actions must be finite, got NaN or inf")
    return np.require(arr, np.float32, "CA")


def check_physical_state(spec: EnvSpec, state: Any, num_envs: int) -> np.ndarray:
    """A physical state in Gymnasium's layout: (state_dim,) for all, or (num_envs, state_dim)
    with num_envs >= 1."""
    if num_envs < 1:
        raise ValueError(f"{spec.env_id}: a physical state needs at least one environment, "
                         f"got {num_envs} (shape {np.shape(state)})")
    arr = np.asarray(state, dtype=np.float64)
    if arr.shape == (spec.state_dim,):
        arr = np.broadcast_to(arr, (num_envs, spec.state_dim))
    if arr.shape != (num_envs, spec.state_dim):
        raise ValueError(f"{spec.env_id}: options['state'] must have shape ({spec.state_dim},) "
                         f"or ({num_envs}, {spec.state_dim}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{spec.env_id}: options['state'] must be finite")
    return np.ascontiguousarray(arr)
