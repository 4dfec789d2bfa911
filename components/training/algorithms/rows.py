"""Metrics rows from an executor's outputs: per-seed arrays (a leading seed axis, added for a
single-seed executor) summarised into one `Row` of plain numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

from components.training.inputs import inputs_for
from components.training.metrics import Row


def per_seed(exe: Any, out: dict[str, Any]) -> dict[str, np.ndarray]:
    """Outputs with a leading seed axis (added for a single-seed executor)."""
    seeded = getattr(exe, "seeds", None) is not None
    return {k: np.asarray(v) if seeded else np.asarray(v)[None] for k, v in out.items()}


def summarise(values: dict[str, np.ndarray]) -> Row:
    """One metrics row from per-seed values (`steps`, `episode_return_mean` and any others):
    means over seeds (steps per seed), and the per-seed returns when there are several seeds.
    A return is None when no episode ended."""
    return summarise_iterations({name: np.asarray(value)[:, None]
                                 for name, value in values.items()})[0]


def summarise_iterations(values: dict[str, np.ndarray]) -> list[Row]:
    """`summarise` for each of several iterations at once, from values [seeds, iterations]:
    the means over seeds computed for every iteration in one pass (a run of 50,000 short
    iterations writes 50,000 rows)."""
    names = list(values)
    columns: dict[str, list] = {}
    for name, value in values.items():
        if name == "episodes":
            columns[name] = value.sum(0).astype(int).tolist()
            continue
        if value.dtype.kind == "f":
            finite = np.isfinite(value)
            count = finite.sum(0)
            total = np.where(finite, value, 0.0).sum(0, dtype=np.float64)
            means = total / np.maximum(count, 1)
            columns[name] = [float(m) if c else None for m, c in zip(means, count, strict=True)]
        else:
            columns[name] = value.mean(0, dtype=np.float64).tolist()
    returns = values["episode_return_mean"]
    several = returns.shape[0] > 1
    rows = []
    for i in range(returns.shape[1]):
        extra = {name: columns[name][i] for name in names}
        if several:
            extra["episode_return_mean_per_seed"] = [
                None if not np.isfinite(r) else float(r) for r in returns[:, i]]
            if "episodes" in values:  # each seed's rolling mean on the curve counts its own
                extra["episodes_per_seed"] = [int(n) for n in values["episodes"][:, i]]
        del extra["steps"]
        rows.append(Row(int(round(float(np.mean(values["steps"][:, i])))),
                        extra.pop("episode_return_mean"), extra))
    return rows


def learned_rows(exe: Any, batches: list[dict[str, Any]], **extra: Any) -> list[Row]:
    """One `learn` call per sampled batch (its inputs picked out of the batch by name, with
    `extra` inputs such as a key added) and a metrics row each: the batch's steps, the mean
    return of the episodes that ended in it, their count, their mean length (where the
    batch has it) and the loss."""
    rows = []
    for batch in batches:
        stats = exe.learn(*inputs_for(exe.graph, "learn", {**batch, **extra}))
        episodes = int(batch["episodes"])
        columns = {"episodes": episodes, "loss": float(stats["loss"])}
        if "episode_length_sum" in batch:
            columns["episode_length_mean"] = (float(batch["episode_length_sum"]) / episodes
                                              if episodes else None)
        rows.append(Row(int(batch["reward"].size),
                        float(batch["episode_return_sum"]) / episodes if episodes else None,
                        columns))
    return rows
