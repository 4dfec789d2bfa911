"""Metrics rows from an executor's outputs: per-seed arrays (a leading seed axis, added for a
single-seed executor) summarised into one row of plain numbers."""

from __future__ import annotations

from typing import Any

import numpy as np


def per_seed(exe: Any, out: dict[str, Any]) -> dict[str, np.ndarray]:
    """Outputs with a leading seed axis (added for a single-seed executor)."""
    seeded = exe.seeds is not None
    return {k: np.asarray(v) if seeded else np.asarray(v)[None] for k, v in out.items()}


def summarise(values: dict[str, np.ndarray]) -> dict[str, Any]:
    """One metrics row from per-seed values: means over seeds (steps per seed), and the
    per-seed returns when there are several seeds. A return is None when no episode ended."""
    row: dict[str, Any] = {"steps": int(round(float(np.mean(values["steps"]))))}
    for name, value in values.items():
        if name == "steps":
            continue
        finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
        row[name] = float(np.mean(finite)) if finite.size else None
        if name == "episodes":
            row[name] = int(np.sum(value))
    returns = values["episode_return_mean"]
    if returns.shape[0] > 1:
        row["episode_return_mean_per_seed"] = [None if not np.isfinite(r) else float(r)
                                               for r in returns]
        if "episodes" in values:  # each seed's rolling mean on the curve counts its own
            row["episodes_per_seed"] = [int(n) for n in values["episodes"]]
    return row
