"""`metagraph train ... --track`: the run's scalars, config and learning curve in Weights &
Biases, as CleanRL's `--track` does (the `track` extra: `pip install -e ".[track]"`).

The run's reporting process (`reporter.py`) writes them, beside the TensorBoard events, so
the training process never imports wandb. Each `metagraph train` (a resume too) is one W&B
run named after the run directory, grouped by it, with `config.json` as its config, every
metrics row logged at its environment steps (a resume logs the kept rows first), and
`curve.png` logged when training ends. W&B's own settings apply: `WANDB_MODE=offline`
writes under `DIR/wandb/` for a later `wandb sync` (what the tests do), `WANDB_API_KEY` or
`wandb login` for online runs. This module imports nothing of the project's.
"""

from __future__ import annotations

import importlib.util
import json
import netrc
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

NO_KEY_NEEDED = ("offline", "disabled", "dryrun")  # WANDB_MODE values that log nothing online


def login_refusal() -> str | None:
    """Why a W&B run cannot start here, found before training does (wandb itself would say
    it from the reporting process, in a long traceback): wandb not installed ("install"), or
    an online run without a key (`WANDB_API_KEY`, or `wandb login`'s entry in ~/.netrc);
    None where it can."""
    if importlib.util.find_spec("wandb") is None:
        return "install"
    if (os.environ.get("WANDB_MODE", "").lower() in NO_KEY_NEEDED
            or os.environ.get("WANDB_API_KEY")):
        return None
    host = urlparse(os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname
    try:
        if netrc.netrc(os.environ.get("NETRC")).authenticators(host or ""):
            return None
    except (OSError, netrc.NetrcParseError):  # no ~/.netrc, or one netrc cannot read
        pass
    return (f"no Weights & Biases key for {host}: run `wandb login` or set WANDB_API_KEY, or "
            f"log offline with WANDB_MODE=offline (the run's wandb/ folder, for `wandb sync` "
            f"later)")


class WandbLog:
    """One W&B run of a training run directory."""

    def __init__(self, run_dir: Path, project: str):
        import wandb  # about 1 s: in the reporting process, while the agent compiles

        self.wandb = wandb
        config = json.loads((run_dir / "config.json").read_text())
        self.run = wandb.init(project=project, name=run_dir.resolve().name,
                              group=str(run_dir.resolve()), dir=str(run_dir), config=config,
                              reinit="create_new")

    def restart(self, rows: list[dict[str, Any]]) -> None:
        """Log the rows a resumed run keeps (a new W&B run starts empty)."""
        self.add(rows)

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Log each row's numbers at its environment steps."""
        for row in rows:
            numbers = {name: value for name, value in row.items()
                       if isinstance(value, int | float) and not isinstance(value, bool)}
            self.run.log(numbers, step=int(row["env_steps"]))

    def curve(self, path: str | Path) -> None:
        """Log the learning curve's image."""
        self.run.log({"curve": self.wandb.Image(str(path))})

    def close(self) -> None:
        """Finish the W&B run (offline: its files are complete under DIR/wandb/)."""
        self.run.finish()
