"""The learning curve of a run, `DIR/curve.png`: mean episode return against environment steps
(and each seed's, when several trained at once; D(Q‖P) in bits on a second axis for
reweighting), drawn with matplotlib from the rows of `DIR/metrics.jsonl`. The trainer draws it
in its reporting process (`reporter.py`); this module imports nothing of the project's."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, BinaryIO


def plot_learning_curve(rows: list[dict[str, Any]], path: str | Path | BinaryIO, title: str
                        ) -> None:
    """Draw the curve of `rows` (metrics rows) into `path`, a PNG file (or binary stream)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # about 0.3 s the first time

    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = [r["env_steps"] for r in rows]
    per_seed = bool(rows) and "episode_return_mean_per_seed" in rows[0]
    ax.plot(steps, [r["episode_return_mean"] for r in rows], marker=".", lw=1.2,
            label="mean over seeds" if per_seed else None)
    if per_seed:
        for k, values in enumerate(zip(*[r["episode_return_mean_per_seed"] for r in rows],
                                       strict=True)):
            ax.plot(steps, values, lw=0.6, alpha=0.4, label=f"seed +{k}")
        ax.legend(fontsize=7)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean episode return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if rows and "bits" in rows[0]:
        bits = ax.twinx()
        bits.plot(steps, [r["bits"] for r in rows], color="#ff7f0e", lw=0.8, alpha=0.7)
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
