"""Shape checks for the loss functions: arrays that must line up do, or a ValueError names the
function and every shape (JAX would otherwise broadcast them silently)."""

from __future__ import annotations

from typing import Any

import numpy as np


def require_same_shape(where: str, **arrays: Any) -> None:
    """Raise ValueError naming `where` and each array's shape unless all `arrays` have the same
    shape."""
    shapes = {name: tuple(np.shape(value)) for name, value in arrays.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(f"{where}: expected equal shapes, got {listed}")


def require_shape(where: str, name: str, value: Any, expected: tuple) -> None:
    """Raise ValueError naming `where` and `name` unless `value` has shape `expected`."""
    if tuple(np.shape(value)) != tuple(expected):
        raise ValueError(f"{where}: {name} must have shape {tuple(expected)}, got "
                         f"{tuple(np.shape(value))}")
