"""A training run's directory: the resolved config, metrics (JSON lines), the learning curve,
the drawing of the agent's graph and checkpoints.

    DIR/config.json      everything needed to run again (env, algorithm, seed, config)
    DIR/metrics.jsonl    one JSON object per iteration (env_steps, wall_time,
                         episode_return_mean, ...)
    DIR/curve.png        mean episode return against environment steps
    DIR/graph.svg        the agent's meta-graph
    DIR/graph.html       the same, as the interactive explorer (one offline file)
    DIR/checkpoint.npz   the executor state and the iteration it was taken after
    DIR/tensorboard/     TensorBoard event files of the same metrics (x axis: env steps)

The trainer writes metrics.jsonl and the checkpoints; its reporting process (`reporter.py`)
writes the TensorBoard events and draws curve.png.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from components.training.reporting.learning_curve import read_metrics
from metagraph.checkpoint import remove_stale_temporaries, write_atomically
from metagraph.errors import LoadError

WRITTEN = (".lock", "config.json", "metrics.jsonl", "checkpoint.npz", "best.npz", "curve.png",
           "graph.svg", "graph.html", "tensorboard")
"""The names a run writes in its directory."""

CONFIG_KEYS = {"env_id": str, "algo": str, "config": dict}
"""The entries every run's config.json has, and their JSON types (the seed and steps are
checked by the run spec, which names their ranges)."""


def kind_name(kind: type) -> str:
    """'a string', 'an int', 'an object' for the JSON types config.json's entries have."""
    return {str: "a string", dict: "an object"}[kind]


class RunDirLocked(OSError):
    """Another run is writing this run directory (`RunDir.lock`)."""


class RunLock:
    """A run directory's lock, held by this process until `release` (or its end: the
    operating system drops the lock of a killed process)."""

    def __init__(self, fd: int):
        self._fd: int | None = fd

    def release(self) -> None:
        """Let another run write the directory."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class RunDir:
    """The files of one run directory. `create=False` (reading a finished run) refuses a
    path that is not a directory instead of creating it."""

    LOCK = ".lock"

    def __init__(self, path: str | Path, create: bool = True):
        self.path = Path(path)
        self.created = False  # made by this object (removed again if no run writes it)
        if create:
            if self.path.exists() and not self.path.is_dir():
                raise ValueError(f"{self.path} is a file, not a run directory")
            self.created = not self.path.exists()
            self.path.mkdir(parents=True, exist_ok=True)
            self.refuse_links()
        elif not self.path.is_dir():
            raise LoadError(f"{self.path}: no such run directory")
        self.remove_stale_temporaries()

    def refuse_links(self) -> None:
        """A run writes its files inside its directory, never through a symbolic link (a
        received run directory whose `graph.svg` links to a file elsewhere would have that
        file overwritten): a ValueError naming each link among the names a run writes."""
        links = [name for name in WRITTEN if (self.path / name).is_symlink()]
        if links:
            shown = ", ".join(f"{name} -> {os.readlink(self.path / name)}" for name in links)
            raise ValueError(f"{self.path}: {shown} {'is a' if len(links) == 1 else 'are'} "
                             f"symbolic link{'s' * (len(links) > 1)}; a run writes its files "
                             f"inside its directory, never through links: remove "
                             f"{'it' if len(links) == 1 else 'them'} or choose another --out")

    def lock(self) -> RunLock:
        """Hold the directory while a run writes it (`flock` on `.lock`, which names the
        holder). A second run into it, or a `--resume` of it, while the first still writes is
        refused: `RunDirLocked` naming the first (its process, command and start)."""
        fd = os.open(self.path / self.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunDirLocked(errno.EBUSY, f"{self.path} is being written by another run "
                                            f"({holder}); wait for it to end or choose "
                                            f"another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, (f"process {os.getpid()}: {' '.join(sys.argv)}, started "
                       f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n").encode(), 0)
        return RunLock(fd)

    def remove_if_unwritten(self) -> None:
        """Remove the directory if this object made it and no run wrote anything into it
        (a train refused at once leaves no empty run directory)."""
        if self.created and {p.name for p in self.path.iterdir()} <= {self.LOCK}:
            (self.path / self.LOCK).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.path.rmdir()

    def remove_stale_temporaries(self) -> None:
        """Remove the temporary files a save killed mid-write left (`.checkpoint.npz.*.tmp`,
        `.metrics.jsonl.*.tmp`), saying so on standard error: every command that opens a run
        directory does this first."""
        for target in (self.checkpoint_path, self.metrics_path):
            for stale, size in remove_stale_temporaries(target):
                print(f"metagraph: removed {stale} ({size:,} bytes), left by a save that was "
                      f"killed; {target.name} is the last complete one", file=sys.stderr)

    @property
    def config_path(self) -> Path:
        """`config.json`: the run's algorithm, environment and config."""
        return self.path / "config.json"

    @property
    def metrics_path(self) -> Path:
        """`metrics.jsonl`: one JSON row per reported iteration."""
        return self.path / "metrics.jsonl"

    @property
    def curve_path(self) -> Path:
        """`curve.png`: the learning curve."""
        return self.path / "curve.png"

    @property
    def checkpoint_path(self) -> Path:
        """`checkpoint.npz`: the latest checkpoint."""
        return self.path / "checkpoint.npz"

    def write_config(self, config: dict[str, Any]) -> None:
        """Write `config.json`."""
        self.config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")

    def read_config(self) -> dict[str, Any]:
        """The run's config.

        Raises:
            LoadError: `config.json` is missing or corrupt.
        """
        try:
            saved = json.loads(self.config_path.read_text())
        except FileNotFoundError:
            raise LoadError(f"{self.path}: no config.json; is this a `metagraph train` run "
                            f"directory?") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise LoadError(f"{self.config_path}: corrupt ({error})") from None
        except RecursionError:
            raise LoadError(f"{self.config_path}: corrupt (nested too deeply to read)") from None
        if not isinstance(saved, dict):
            raise LoadError(f"{self.config_path}: corrupt (a JSON object of the run's settings "
                            f"expected, got {type(saved).__name__})")
        for key, kind in CONFIG_KEYS.items():
            value = saved.get(key)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise LoadError(f"{self.config_path}: corrupt ({key!r} must be "
                                f"{kind_name(kind)}, got {value!r:.80})")
        return saved

    def metrics(self) -> list[dict[str, Any]]:
        """The rows of `metrics.jsonl` (see `learning_curve.read_metrics`: a cut last row is
        dropped with a warning; any other unreadable row is a LoadError naming its line)."""
        try:
            return read_metrics(self.metrics_path)
        except ValueError as error:
            raise LoadError(str(error)) from None

    def keep_metrics(self, iterations: int) -> list[dict[str, Any]]:
        """Drop the rows written after the checkpoint being resumed from (of iteration
        `iterations` and later), and a row cut by a kill; returns the rows kept. The file is
        rewritten atomically: a kill during the rewrite leaves the old one."""
        kept = [m for m in self.metrics() if m["iteration"] < iterations]
        text = "".join(json.dumps(m) + "\n" for m in kept).encode()
        write_atomically(self.metrics_path, lambda f: f.write(text))
        return kept

    def append_metrics(self, rows: list[dict[str, Any]]) -> None:
        """Append rows to `metrics.jsonl`."""
        with self.metrics_path.open("a") as f:
            f.write("".join(json.dumps(row) + "\n" for row in rows))
