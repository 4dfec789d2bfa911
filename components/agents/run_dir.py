"""A training run's directory: the resolved config, metrics (JSON lines), the learning curve,
the drawing of the agent's graph and checkpoints.

    DIR/config.json      everything needed to run again (env, algorithm, seed, config)
    DIR/metrics.jsonl    one JSON object per iteration (env_steps, wall_time,
                         episode_return_mean, ...)
    DIR/curve.png        mean episode return against environment steps
    DIR/graph.svg        the agent's meta-graph
    DIR/checkpoint.npz   the executor state and the iteration it was taken after
    DIR/tensorboard/     TensorBoard event files of the same metrics (x axis: env steps)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from components.agents.tensorboard_log import TensorBoardLog
from metagraph.errors import LoadError


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def checkpoint_path(self) -> Path:
        return self.path / "checkpoint.npz"

    def write_config(self, config: dict[str, Any]) -> None:
        self.config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")

    def read_config(self) -> dict[str, Any]:
        try:
            return json.loads(self.config_path.read_text())
        except FileNotFoundError:
            raise LoadError(f"{self.path}: no config.json; is this a `metagraph train` run "
                            f"directory?") from None
        except json.JSONDecodeError as error:
            raise LoadError(f"{self.config_path}: corrupt ({error})") from None

    def metrics(self) -> list[dict[str, Any]]:
        if not self.metrics_path.exists():
            return []
        return [json.loads(line) for line in self.metrics_path.read_text().splitlines() if line]

    def keep_metrics(self, iterations: int) -> None:
        """Drop metrics written after the checkpoint being resumed from."""
        kept = [m for m in self.metrics() if m["iteration"] < iterations]
        self.metrics_path.write_text("".join(json.dumps(m) + "\n" for m in kept))

    def append_metrics(self, rows: list[dict[str, Any]]) -> None:
        """Append rows to metrics.jsonl and to the TensorBoard event file."""
        with self.metrics_path.open("a") as f:
            f.write("".join(json.dumps(row) + "\n" for row in rows))
        if "_tensorboard" not in self.__dict__:
            self._tensorboard = TensorBoardLog(self.path / "tensorboard")
        self._tensorboard.add(rows)

    def close(self) -> None:
        """Flush and close the TensorBoard event file."""
        if "_tensorboard" in self.__dict__:
            self.__dict__.pop("_tensorboard").close()

    def plot_curve(self, title: str) -> Path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = self.metrics()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        steps = [r["env_steps"] for r in rows]
        ax.plot(steps, [r["episode_return_mean"] for r in rows], marker=".", lw=1.2,
                label="mean over seeds" if rows and "episode_return_mean_per_seed" in rows[0]
                else None)
        if rows and "episode_return_mean_per_seed" in rows[0]:
            per_seed = list(zip(*[r["episode_return_mean_per_seed"] for r in rows],
                                strict=True))
            for k, values in enumerate(per_seed):
                ax.plot(steps, values, lw=0.6, alpha=0.4, label=f"seed +{k}")
            ax.legend(fontsize=7)
        ax.set_xlabel("environment steps")
        ax.set_ylabel("mean episode return")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        if rows and "bits" in rows[0]:
            bits = ax.twinx()
            bits.plot([r["env_steps"] for r in rows], [r["bits"] for r in rows], color="#ff7f0e",
                      lw=0.8, alpha=0.7)
            bits.set_ylabel("D(Q‖P) bits", color="#ff7f0e")
        fig.tight_layout()
        path = self.path / "curve.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path
