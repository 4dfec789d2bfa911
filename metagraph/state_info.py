"""What a graph's state is made of, array by array: the rows of a component's state table
(drawings, `MetaGraph.summary`, the explorer) and their sizes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np


@dataclasses.dataclass(frozen=True)
class StateEntry:
    """One array of a component's state.

    `component` is its scope path, `name` the state variable (`get_state`/`get_param`'s
    name), `leaf` the array's path inside a pytree variable (`""` for a lone array,
    `linear/w` for haiku parameters), then its `shape`, `dtype` and whether it is
    `trainable` (a parameter).
    """

    component: str
    name: str
    leaf: str
    shape: tuple[int, ...]
    dtype: np.dtype
    trainable: bool

    @property
    def size(self) -> int:
        """Number of scalars."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes the array takes."""
        return self.size * np.dtype(self.dtype).itemsize

    @property
    def full_name(self) -> str:
        """`name/leaf`, or `name` for a lone array."""
        return f"{self.name}/{self.leaf}" if self.leaf else self.name


def state_entries(state_spec: Mapping[str, Mapping[str, Any]],
                  trainable: set[tuple[str, str]] | Any) -> dict[str, list[StateEntry]]:
    """Scope -> its state arrays, from a graph's `state_spec` and set of trainable
    `(scope, name)` pairs."""
    found: dict[str, list[StateEntry]] = {}
    for scope, variables in state_spec.items():
        rows = found.setdefault(scope, [])
        for name, value in variables.items():
            for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
                rows.append(StateEntry(scope, name, "/".join(_key_text(k) for k in path),
                                       tuple(int(d) for d in leaf.shape), np.dtype(leaf.dtype),
                                       (scope, name) in trainable))
    return found


def _key_text(key: Any) -> str:
    for attr in ("key", "idx", "name"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def bytes_text(n: int) -> str:
    """`512 B`, `1.5 KiB`, `3.2 MiB`, `1.0 GiB`."""
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")
