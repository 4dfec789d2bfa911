"""The learning curve of a run, `DIR/curve.png`, drawn with matplotlib from the rows of
`DIR/metrics.jsonl` as rl-baselines3-zoo draws them: a rolling mean of the return over the
last 100 episodes against environment steps, each iteration's mean as faded points,
evaluations during training in their own colour (and each seed's, when several trained at
once; D(Q‖P) in bits on a second axis for reweighting). The trainer draws it
in its reporting process (`reporter.py`); this module imports nothing of the project's."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, BinaryIO

WINDOW = 100
"""Episodes in the rolling mean of the curves (rl-baselines3-zoo's plots use 100 too)."""
RAW, MEAN, EVALUATION = "#1f77b4", "#1f77b4", "#d62728"


def rolling_mean(rows: list[dict[str, Any]], window: int = WINDOW,
                 key: str = "episode_return_mean") -> list[float | None]:
    """At each row, the mean return of the last `window` episodes: each row's mean weighted
    by the episodes that ended in it (its `episodes`; 1 where rows do not count them, 0 where
    none ended), over the latest rows holding `window` episodes (the oldest of them
    partly). None before the first episode."""
    found: list[float | None] = []
    recent: list[tuple[float, float]] = []  # (episodes, mean), newest last
    for row in rows:
        value = row.get(key)
        weight = float(row.get("episodes", 1)) if value is not None else 0.0
        if weight > 0:
            recent.append((weight, float(value)))
        total, summed = 0.0, 0.0
        for count, mean in reversed(recent):
            used = min(count, window - total)
            total, summed = total + used, summed + used * mean
            if total >= window:
                break
        found.append(summed / total if total else None)
    return found


def seed_rows(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each seed's rows of a run of several seeds (`episode_return_mean_per_seed`, with
    `episodes_per_seed`, else an equal share of the episodes), or `[rows]` for one seed."""
    if not rows or "episode_return_mean_per_seed" not in rows[0]:
        return [rows]
    seeds = len(rows[0]["episode_return_mean_per_seed"])
    return [[{"episode_return_mean": r["episode_return_mean_per_seed"][k],
              "episodes": r["episodes_per_seed"][k] if "episodes_per_seed" in r
              else r.get("episodes", seeds) / seeds} for r in rows]
            for k in range(seeds)]


def evaluation_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of evaluations during training (`--eval-every`): they hold `eval_return_mean`."""
    return [r for r in rows if r.get("eval_return_mean") is not None]


def draw_returns(ax: Any, rows: list[dict[str, Any]], window: int = WINDOW) -> None:
    """Onto matplotlib axes `ax`: each row's mean return as faded points, their rolling mean
    over `window` episodes as the line (each seed's faded, and their mean, with several
    seeds), and evaluation rows in their own colour with their standard deviation."""
    training = [r for r in rows if r.get("episode_return_mean") is not None]
    steps = [r["env_steps"] for r in training]
    ax.scatter(steps, [r["episode_return_mean"] for r in training], s=6, color=RAW,
               alpha=0.25, lw=0, label="iteration mean")
    per_seed = len(seed_rows(training)) > 1
    if per_seed:  # each seed's rolling mean, and their mean
        curves = [rolling_mean(one, window) for one in seed_rows(training)]
        for k, curve in enumerate(curves):
            ax.plot(steps, curve, lw=0.7, alpha=0.45, label=f"seed +{k}")
        mean = [None if None in values else sum(values) / len(curves)
                for values in zip(*curves, strict=True)]
    else:
        mean = rolling_mean(training, window)
    ax.plot(steps, mean, color=MEAN, lw=1.8,
            label=f"rolling mean, {window} episodes" + (" (mean of seeds)" if per_seed else ""))
    evaluations = evaluation_rows(rows)
    if evaluations:
        ax.errorbar([r["env_steps"] for r in evaluations],
                    [r["eval_return_mean"] for r in evaluations],
                    yerr=[r.get("eval_return_std", 0.0) for r in evaluations], color=EVALUATION,
                    marker="o", ms=4, lw=1.2, capsize=2, label="evaluation (deterministic)")


def plot_learning_curve(rows: list[dict[str, Any]], path: str | Path | BinaryIO, title: str
                        ) -> None:
    """Draw the curve of `rows` (metrics rows) into `path`, a PNG file (or binary stream):
    `draw_returns`, plus D(Q‖P) in bits on a second axis for reweighting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # about 0.3 s the first time

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    draw_returns(ax, rows)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episode return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    bits_rows = [r for r in rows if r.get("bits") is not None]
    if bits_rows:
        bits = ax.twinx()
        bits.plot([r["env_steps"] for r in bits_rows], [r["bits"] for r in bits_rows],
                  color="#ff7f0e", lw=0.8, alpha=0.7)
        bits.set_ylabel("D(Q‖P) bits", color="#ff7f0e")
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a `metrics.jsonl` file ([] when it does not exist).

    A last line without its newline that is not JSON was cut by an interrupted write (a kill,
    a power loss, a full disk): it is dropped with a warning (a resumed run writes that
    iteration again). Any other line that is not a JSON object is a ValueError naming the file
    and the line."""
    path = Path(path)
    if not path.exists():
        return []
    text = path.read_text(errors="replace")
    lines = text.split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            if number == len(lines):  # the last line, without its newline: cut mid-write
                warnings.warn(f"{path}:{number}: dropped a partial last row (an interrupted "
                              f"write: {error})", stacklevel=2)
                break
            row = error
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: not a metrics row ({row}); delete or repair "
                             f"that line")
        rows.append(row)
    return rows
