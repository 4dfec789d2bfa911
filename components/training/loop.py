"""`TrainingLoop`: the loop of calls of one run, once the executor exists.

Each pass calls `next_rows(call)` (the algorithm's `run`, or the distributed learner's step),
checks the rows at the door (`metrics.check_rows`), counts their steps, appends them to
`metrics.jsonl` and the reporter, and saves a checkpoint every CHECKPOINT_SECONDS (less often
when saving takes more than CHECKPOINT_SHARE of that). Ctrl-C is held back until the call under
way has returned (`interrupts.py`); the loop then stops and saves. A call that fails, that
returns bad rows or a loss that is not finite, or after which the state holds NaN, is never
saved: the last good checkpoint stays.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from components.training.interrupts import deferred_interrupts
from components.training.metrics import Row, check_rows
from components.training.reporter import Reporter
from components.training.run_dir import RunDir
from metagraph.errors import RuntimeCheckError

CHECKPOINT_SECONDS = 30.0  # 0: after every call
CHECKPOINT_SHARE = 0.05


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
    iterations when that is set, else once the rows have counted `goal_steps` steps. `source`
    names what made the rows in errors ("run()", "Distributed.update()"). `after_call(rows)`,
    when given, sees each call's rows just before they are written (dicts it may add numbers
    to: periodic evaluation, `Evaluator.after_call`). `on_close` runs when the loop ends,
    whatever the reason (closing the evaluator, waiting for the graph's drawing)."""

    name: str
    exe: Any
    run_dir: RunDir
    reporter: Reporter
    next_rows: Callable[[int], Sequence[Any]]
    counters: Counters
    goal_steps: int
    goal_iterations: int | None = None
    source: str = "run()"
    shown: tuple[str, ...] = ("episode_return_mean",)
    progress: bool = True
    streams: Callable[[], int] = lambda: 0
    on_close: Callable[[], None] = lambda: None
    after_call: Callable[[list[dict[str, Any]]], None] | None = None

    def finished(self) -> bool:
        """Whether the run has done its iterations (or taken its steps)."""
        if self.goal_iterations is not None:
            return self.counters.iteration >= self.goal_iterations
        return self.counters.env_steps >= self.goal_steps

    def run(self) -> None:
        """Call until finished or interrupted; save what is whole at the end."""
        kept = self.run_dir.keep_metrics(self.counters.iteration)
        self.reporter.restart(kept)  # the TensorBoard events become the kept rows
        # the last mean return carries over a resume to rows where no episode ended
        self.last_return = kept[-1].get("episode_return_mean") if kept else None
        self.start, self.saved_call = time.perf_counter(), self.counters.call
        self.last_save, self.save_every = self.start, CHECKPOINT_SECONDS
        self.bar = _progress_bar(self.goal_steps, self.counters.env_steps, self.progress)
        self.whole = True  # whether exe.state is the state after whole, good calls
        self.before = self.exe.state
        with deferred_interrupts() as interrupts:  # Ctrl-C: stop between two calls, then save
            self.interrupts = interrupts
            try:
                while not self.finished():
                    self.step()
                    if interrupts.received:
                        raise KeyboardInterrupt
            finally:  # also on Ctrl-C (held back until the call returned) and on errors
                self.close()

    def step(self) -> None:
        """One call: its rows checked, counted, written; a checkpoint when one is due."""
        self.whole, self.before = False, self.exe.state  # until the call returned good rows
        rows = self.call()
        if bad := non_finite_loss(rows, self.counters.iteration):
            raise NonFiniteError(f"{self.name}: training diverged: {bad}; the state of call "
                                 f"{self.counters.call + 1} is not saved, {self.saved_text()}")
        self.counters.call += 1
        self.whole = True
        self.record(rows)
        if time.perf_counter() - self.last_save >= self.save_every:
            before_save = time.perf_counter()
            self.save()
            self.saved_call, self.last_save = self.counters.call, time.perf_counter()
            self.save_every = (max(CHECKPOINT_SECONDS, (self.last_save - before_save)
                                   / CHECKPOINT_SHARE) if CHECKPOINT_SECONDS else 0.0)
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
        """Count the rows' steps and write them (metrics.jsonl, the reporter)."""
        wall = self.counters.wall + time.perf_counter() - self.start
        written = []
        for row in rows:
            self.counters.env_steps += row.steps
            mean = row.episode_return_mean
            mean = self.last_return if mean is None else mean  # no episode ended
            self.last_return = mean
            written.append({"iteration": self.counters.iteration,
                             "env_steps": self.counters.env_steps,
                             "wall_time": round(wall, 3), "episode_return_mean": mean,
                             **row.extra})
            self.counters.iteration += 1
        if self.after_call is not None:
            self.after_call(written)
        self.run_dir.append_metrics(written)
        self.reporter.add(written)

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

    def saved_text(self) -> str:
        """What the checkpoint holds, for messages."""
        path = self.run_dir.checkpoint_path
        return (f"{path} keeps the state after call {self.saved_call}" if path.exists()
                else "no checkpoint was written")

    def close(self) -> None:
        """Save if the state is whole and newer than the checkpoint; stop what runs."""
        # a call that failed before it replaced the state left the state whole
        self.whole = self.whole or (self.exe.state is self.before
                                    and self.exe.state_lost is None)
        try:
            if self.counters.call != self.saved_call and self.whole:
                self.save()
        finally:
            self.on_close()
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
