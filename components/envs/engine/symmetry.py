"""`Symmetry`: a transformation of a game's positions under which its rules are the same (a
board mirrored or turned), as index maps over the flat observation and over the actions, so
that a learner can train on each position it saw transformed (AlphaGo Zero's data
augmentation; AlphaZero's `augment`). A game declares its symmetries in its spec
(`EnvSpec.symmetries`); `board_symmetries` makes those of a board whose observation is planes
[rows, columns, planes] and whose actions are its cells or its columns.

    Othello = board_symmetries(8, 8, 2, ("rot180", "transpose", "antitranspose"),
                               actions="cells", extra_actions=1)   # the pass stays the pass

A symmetry maps a position with flat observation `o`, policy `p` and legal mask `m` to the
position with `o[observation]`, `p[actions]` and `m[actions]`: the transformed position's
action `a` is the original's `actions[a]`.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

# (row, column) -> the cell it comes from, for a board of `rows` x `columns`.
_MAPS = {
    "flip_lr": lambda r, c, rows, cols: (r, cols - 1 - c),
    "flip_ud": lambda r, c, rows, cols: (rows - 1 - r, c),
    "rot180": lambda r, c, rows, cols: (rows - 1 - r, cols - 1 - c),
    "transpose": lambda r, c, rows, cols: (c, r),
    "antitranspose": lambda r, c, rows, cols: (cols - 1 - c, rows - 1 - r),
    "rot90": lambda r, c, rows, cols: (cols - 1 - c, r),
    "rot270": lambda r, c, rows, cols: (c, rows - 1 - r),
}
SQUARE_ONLY = ("transpose", "antitranspose", "rot90", "rot270")
NAMES = tuple(_MAPS)


@dataclasses.dataclass(frozen=True, eq=False)
class Symmetry:
    """One symmetry of a game's rules.

    Attributes:
        name: what it is ("rot180").
        observation: int [d]: the transformed position's flat observation is the original's
            `obs.reshape(-1)[observation]` (a permutation of range(d)).
        actions: int [num_actions]: the transformed position's action `a` is the original's
            `actions[a]` (a permutation of range(num_actions)).
        cells: int [rows * columns] or None: for a board, the transformed position's cell i
            holds the original's cell `cells[i]` (row-major), what its physical state maps by.
    """

    name: str
    observation: np.ndarray
    actions: np.ndarray
    cells: np.ndarray | None = None


def cell_map(rows: int, columns: int, name: str) -> np.ndarray:
    """int [rows * columns]: the cell (row-major) each cell of the transformed board comes
    from under `name` (one of `NAMES`; the square-only ones need rows == columns)."""
    if name not in _MAPS:
        raise ValueError(f"a board symmetry is one of {list(NAMES)}, got {name!r}")
    if name in SQUARE_ONLY and rows != columns:
        raise ValueError(f"{name!r} is a symmetry of a square board only, got {rows} x "
                         f"{columns}")
    out = np.empty(rows * columns, np.int32)
    for r in range(rows):
        for c in range(columns):
            fr, fc = _MAPS[name](r, c, rows, columns)
            out[r * columns + c] = fr * columns + fc
    return out


def board_symmetries(rows: int, columns: int, planes: int, names: tuple[str, ...], *,
                     actions: str = "cells", extra_actions: int = 0) -> tuple[Symmetry, ...]:
    """The symmetries `names` of a board whose observation is planes [rows, columns, planes]
    flattened row-major, and whose actions are its cells row-major (`actions="cells"`:
    Othello, Hex) or its columns (`"columns"`: Connect Four; every name must then keep the
    rows: "flip_lr"), then `extra_actions` that no symmetry moves (Othello's pass)."""
    if actions not in ("cells", "columns"):
        raise ValueError(f"board_symmetries: actions is 'cells' or 'columns', got {actions!r}")
    out = []
    for name in names:
        cells = cell_map(rows, columns, name)
        observation = (cells[:, None] * planes + np.arange(planes)).reshape(-1)
        if actions == "cells":
            moved = cells
        else:
            if name != "flip_lr":
                raise ValueError(f"a board whose actions are its columns has the symmetry "
                                 f"'flip_lr' only, got {name!r}")
            moved = cells[:columns]
        acts = np.concatenate([moved, np.arange(len(moved), len(moved) + extra_actions)])
        out.append(Symmetry(name, observation.astype(np.int32), acts.astype(np.int32),
                            cells))
    return tuple(out)


def symmetry_problems(symmetries: object, observation_size: int, num_actions: int) -> list[str]:
    """What is wrong with a spec's `symmetries` for observations of `observation_size`
    elements and `num_actions` actions (empty: nothing)."""
    if not isinstance(symmetries, tuple):
        return [f"symmetries must be a tuple of Symmetry, got {type(symmetries).__name__}"]
    problems = []
    for s in symmetries:
        if not isinstance(s, Symmetry):
            problems.append(f"symmetries holds {s!r}, not a Symmetry")
            continue
        for what, index, size in (("observation", s.observation, observation_size),
                                  ("actions", s.actions, num_actions)):
            index = np.asarray(index)
            if index.shape != (size,) or index.dtype.kind not in "iu" \
                    or not np.array_equal(np.sort(index), np.arange(size)):
                problems.append(f"symmetry {s.name!r}: its {what} is no permutation of "
                                f"range({size})")
    return problems


def transform(key: jax.Array, observations: jax.Array, policies: jax.Array,
              symmetries: tuple[Symmetry, ...]) -> tuple[jax.Array, jax.Array]:
    """Each position of a batch (`observations` [B, ...], `policies` [B, num_actions]) under
    one of `symmetries` or none, uniformly at random from `key`: the observations and
    policies of the transformed positions (same shapes and dtypes)."""
    if not symmetries:
        return observations, policies
    size, count = observations[0].size, policies.shape[-1]
    observation_maps = jnp.asarray(np.stack([np.arange(size)] + [s.observation
                                                                 for s in symmetries]))
    action_maps = jnp.asarray(np.stack([np.arange(count)] + [s.actions for s in symmetries]))
    which = jax.random.randint(key, (observations.shape[0],), 0, len(symmetries) + 1)
    flat = observations.reshape(observations.shape[0], -1)
    moved = jnp.take_along_axis(flat, observation_maps[which], axis=1)
    return (moved.reshape(observations.shape),
            jnp.take_along_axis(policies, action_maps[which], axis=1))


__all__ = ["NAMES", "Symmetry", "board_symmetries", "cell_map", "symmetry_problems",
           "transform"]
