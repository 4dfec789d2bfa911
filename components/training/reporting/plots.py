"""`metagraph plot RUN... -o plot.png`: several runs on one figure, as rl-baselines3-zoo's
plots draw them. Runs of the same algorithm on the same environment (different `--seed`s, or
one run of `--seeds K`) are one curve: the mean of their rolling means (over 100 episodes,
`learning_curve.rolling_mean`) with a band of one standard deviation across seeds, each on
the environment steps all of them reached.

    metagraph plot runs/ppo-s0 runs/ppo-s1 runs/ppo-s2 runs/sac -o cheetah.png
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from components.training.reporting.learning_curve import (
    WINDOW,
    read_metrics,
    rolling_mean,
    seed_rows,
)
from metagraph.errors import LoadError


def seed_curves(run: str | Path, window: int = WINDOW) -> tuple[str, list[tuple[Any, Any]]]:
    """The label of a run ("ALGO on ENV") and each of its seeds' (steps, rolling mean)."""
    path = Path(run)
    try:
        config = json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        raise LoadError(f"{path}: no readable config.json; is it a `metagraph train` run "
                        f"directory?") from None
    rows = [r for r in read_metrics(path / "metrics.jsonl")
            if r.get("episode_return_mean") is not None]
    if not rows:
        raise LoadError(f"{path}: no metrics rows with a return to draw")
    steps = np.array([r["env_steps"] for r in rows], float)
    curves = [(steps, np.array([np.nan if v is None else v for v in rolling_mean(one, window)]))
              for one in seed_rows(rows)]
    algo = str(config.get("algo", "?")).rpartition(":")[2] or config.get("algo")
    return f"{algo} on {config.get('env_id', '?')}", curves


def plot_runs(runs: list[str | Path], path: str | Path, window: int = WINDOW,
              title: str | None = None) -> Path:
    """Draw `runs` (run directories) on one figure into `path` (PNG, SVG or PDF, by suffix):
    one curve per algorithm and environment, the mean over its seeds with a ±1 standard
    deviation band where there are several."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[str, list[tuple[Any, Any]]] = {}
    for run in runs:
        label, curves = seed_curves(run, window)
        groups.setdefault(label, []).extend(curves)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, curves in groups.items():
        end = min(steps[-1] for steps, _ in curves)  # the steps every seed reached
        grid = np.unique(np.concatenate([steps[steps <= end] for steps, _ in curves]))
        values = np.stack([np.interp(grid, steps, mean) for steps, mean in curves])
        mean = np.nanmean(values, axis=0)
        line, = ax.plot(grid, mean, lw=1.8,
                        label=f"{label} ({len(curves)} seeds)" if len(curves) > 1 else label)
        if len(curves) > 1:
            std = np.nanstd(values, axis=0)
            ax.fill_between(grid, mean - std, mean + std, color=line.get_color(), alpha=0.2,
                            lw=0)
    ax.set_xlabel("environment steps")
    ax.set_ylabel(f"episode return (rolling mean, {window} episodes)")
    ax.set_title(title or ", ".join(groups))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
