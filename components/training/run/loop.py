"""`TrainingLoop`: the loop of calls of one run, once the executor exists.

Each pass calls `next_rows(call)` (the algorithm's `run`, or the distributed learner's step),
checks the rows at the door (`metrics.check_rows`), counts their steps, hands them to the
callbacks (`callbacks.py`: evaluation adds its numbers, reporting sends them on), appends them
to `metrics.jsonl`, and calls the callbacks again (`Checkpoints` saves when one is due). Ctrl-C
is held back until the call under way has returned (`interrupts.py`); the loop then stops and
the callbacks end ("interrupted"). A call that fails, that returns bad rows or a loss that is
not finite, or after which the state holds NaN, is never saved: the last good checkpoint stays.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from components.training.metrics import Row, check_rows
from components.training.run.callbacks import Callback
from components.training.run.interrupts import deferred_interrupts
from components.training.run.run_dir import RunDir
from metagraph.errors import RuntimeCheckError

EPISODE_MEANS = ("episode_return_mean", "episode_length_mean")
"""The columns of a metrics row about the episodes that ended in it: a row where none ended
repeats the last row's (over a resume too), so a curve shows the last finished episodes."""


class RunExitedError(ValueError):
    """The algorithm's code called `sys.exit()` inside a call: the run stops with this error
    (the last whole state saved), not as a finished run."""


class NonFiniteError(ValueError):
    """Training produced a NaN or infinite loss, or NaN in its state: the run stops and the
    last good checkpoint is kept."""


@dataclasses.dataclass
class Counters:
    """Where a run is; a checkpoint's meta records them."""

    call: int = 0
    iteration: int = 0
    env_steps: int = 0
    wall: float = 0.0  # seconds of training before this process
    streams: int = 0   # sampler key streams used (distributed runs)

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> Counters:
        """The counters a checkpoint's meta recorded (missing ones 0)."""
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{name: value for name, value in meta.items() if name in names})


@dataclasses.dataclass
class TrainingLoop:
    """The calls of one run (see the module docstring).

    `next_rows(call)` returns the rows of call `call`; the loop ends after `goal_iterations`
    iterations when that is set, else once the rows have counted `goal_steps` steps, or after
    a call whose rows a callback answered False. `source` names what made the rows in errors
    ("run()", "Distributed.update()"). `callback` (a `CallbackList`) sees the start, each
    call's rows and the end."""

    name: str
    exe: Any
    run_dir: RunDir
    callback: Callback
    next_rows: Callable[[int], Sequence[Any]]
    counters: Counters
    goal_steps: int
    goal_iterations: int | None = None
    source: str = "run()"
    shown: tuple[str, ...] = ("episode_return_mean",)
    progress: bool = True
    streams: Callable[[], int] = lambda: 0

    def finished(self) -> bool:
        """Whether the run has done its iterations (or taken its steps)."""
        if self.goal_iterations is not None:
            return self.counters.iteration >= self.goal_iterations
        return self.counters.env_steps >= self.goal_steps

    def run(self) -> None:
        """Call until finished, stopped by a callback, or interrupted; the callbacks end
        whatever happens (the checkpoint of a whole state is saved then)."""
        self.kept = self.run_dir.keep_metrics(self.counters.iteration)
        # the last episode means carry over a resume to rows where no episode ended
        self.last_means = {key: self.kept[-1].get(key) if self.kept else None
                           for key in EPISODE_MEANS}
        self.start, self.saved_call = time.perf_counter(), self.counters.call
        self.bar = _progress_bar(self.goal_steps, self.counters.env_steps, self.progress)
        self.whole = True  # whether exe.state is the state after whole, good calls
        self.before = self.exe.state
        self.stopped, outcome = False, "failed"
        self.callback.on_start(self)
        with deferred_interrupts() as interrupts:  # Ctrl-C: stop between two calls, then save
            self.interrupts = interrupts
            try:
                while not self.finished() and not self.stopped:
                    interrupts.stop_if_received()  # (one held back while the run started)
                    self.step()
                    interrupts.stop_if_received()
                outcome = "finished"
            except KeyboardInterrupt:
                outcome = "interrupted"
                raise
            finally:  # also on Ctrl-C (held back until the call returned) and on errors
                self.close(outcome)

    def step(self) -> None:
        """One call: its rows checked, counted, shown to the callbacks, written."""
        self.whole, self.before = False, self.exe.state  # until the call returned good rows
        rows = self.call()
        if bad := non_finite_loss(rows, self.counters.iteration):
            raise NonFiniteError(f"{self.name}: training diverged: {bad}; the state of call "
                                 f"{self.counters.call + 1} is not saved, {self.saved_text()}")
        self.counters.call += 1
        self.record(rows)
        self.whole = True  # its rows written: a callback failing before that leaves it unsaved
        self.callback.after_call(self)
        if self.bar is not None:
            self.bar.update(min(self.counters.env_steps, self.goal_steps) - self.bar.n)
            self.bar.set_postfix({k: f"{v:.2f}" for k, v in rows[-1].items()
                                  if k in self.shown and isinstance(v, int | float)})

    def call(self) -> list[Row]:
        """The checked rows of the next call. A `sys.exit()` inside it ends the run with an
        error, not as a success."""
        try:
            self.interrupts.calling = True  # a second Ctrl-C now ends the process
            rows = self.next_rows(self.counters.call)
        except RuntimeCheckError as error:  # e.g. an environment refusing NaN actions
            if bad := diverged(self.exe):
                raise NonFiniteError(f"{self.name}: training diverged: {bad} after call "
                                     f"{self.counters.call + 1}, so: {error}; not saved, "
                                     f"{self.saved_text()}") from None
            raise
        except SystemExit as exit_:
            raise RunExitedError(f"{self.name}: {self.source} called sys.exit({exit_.code!r}) "
                               f"during call {self.counters.call + 1}; the run is not "
                               f"finished ({self.saved_text()})") from None
        finally:
            self.interrupts.calling = False
        return check_rows(self.name, rows, self.source)

    def record(self, rows: list[Row]) -> None:
        """Count the rows' steps, show them to the callbacks and write them (metrics.jsonl)."""
        wall = self.counters.wall + time.perf_counter() - self.start
        written = []
        for row in rows:
            self.counters.env_steps += row.steps
            line = {"iteration": self.counters.iteration,
                    "env_steps": self.counters.env_steps, "wall_time": round(wall, 3),
                    "episode_return_mean": row.episode_return_mean, **row.extra}
            for key in EPISODE_MEANS:  # where no episode ended, the last ones' means
                if key in line and line[key] is None:
                    line[key] = self.last_means[key]
                self.last_means[key] = line.get(key, self.last_means[key])
            written.append(line)
            self.counters.iteration += 1
        self.stopped = self.callback.on_rows(self, written) is False
        self.run_dir.append_metrics(written)

    def save(self) -> None:
        """A checkpoint of the state and the counters; NonFiniteError (nothing written) when
        the state holds NaN."""
        if bad := non_finite_state(self.exe.state):
            self.whole = False
            raise NonFiniteError(f"{self.name}: training diverged: {bad} after call "
                                 f"{self.counters.call}; not saved, {self.saved_text()}")
        meta = dataclasses.asdict(self.counters)
        meta.update(wall=self.counters.wall + time.perf_counter() - self.start,
                    streams=self.streams())
        self.exe.save_checkpoint(self.run_dir.checkpoint_path, meta=meta)
        self.saved_call = self.counters.call

    def state_is_whole(self) -> bool:
        """Whether the executor's state is the state after whole, good calls (a call that
        failed before it replaced the state left it whole)."""
        return self.whole or (self.exe.state is self.before and self.exe.state_lost is None)

    def saved_text(self) -> str:
        """What the checkpoint holds, for messages."""
        path = self.run_dir.checkpoint_path
        return (f"{path} keeps the state after call {self.saved_call}" if path.exists()
                else "no checkpoint was written")

    def close(self, outcome: str) -> None:
        """End the callbacks (`outcome`: "finished", "interrupted", "failed") and the bar."""
        try:
            self.callback.on_end(self, outcome)
        finally:
            if self.bar is not None:
                self.bar.close()


def non_finite_loss(rows: Sequence[Row], iteration: int) -> str | None:
    """A description of the first row (counted from `iteration`) whose `loss` is not a finite
    number (per seed too), or None."""
    for i, row in enumerate(rows):
        loss = row.extra.get("loss")
        if loss is not None and not np.isfinite(np.asarray(loss, np.float64)).all():
            return f"iteration {iteration + i} has loss {loss}"
    return None


def non_finite_state(state: Any) -> str | None:
    """A description of the state entries holding NaN (an infinity can be legitimate, e.g.
    an empty min-tree), or None. Scanned on the host (the checkpoint copies the state there
    anyway): no program is compiled for each entry's shape."""
    bad = [jax.tree_util.keystr(path) for path, leaf in jax.tree_util.tree_leaves_with_path(state)
           if jnp.issubdtype(leaf.dtype, jnp.inexact) and np.isnan(np.asarray(leaf)).any()]
    return None if not bad else f"NaN in the state ({', '.join(bad[:3])}" \
        f"{f' and {len(bad) - 3} more' if len(bad) > 3 else ''})"


def diverged(exe: Any) -> str | None:
    """NaN anywhere in `exe`'s state, or a parameter that is not finite: a description, or
    None."""
    if bad := non_finite_state(exe.state):
        return bad
    trainable = sorted({(entry.component, entry.name) for entry in exe.graph.state_table()
                        if entry.trainable})
    bad = [f"{scope} {name}" for scope, name in trainable
           if not all(np.isfinite(np.asarray(leaf)).all()
                      for leaf in jax.tree.leaves(exe.state[scope][name]))]
    return None if not bad else f"parameters that are not finite ({', '.join(bad[:3])})"


def _progress_bar(total: int, done: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=min(done, total), unit="step", unit_scale=True,
                dynamic_ncols=True)
