"""Callbacks on a run's training loop (Stable-Baselines3's `BaseCallback`/`CallbackList` are
the model): what happens around the calls, as parts that each do one thing.

    class StopAtReturn(Callback):
        def on_rows(self, loop, rows):
            return rows[-1]["episode_return_mean"] < 475   # False: stop after this call

    train(spec, "runs/ppo", callbacks=[StopAtReturn()])

The trainer composes its own from the run's spec, in this order, before and after a user's:
`Checkpoints` (a checkpoint every `seconds`, and at the end), `Periodic` evaluation
(`--eval-every`, `--save-best`) and videos (`--video-every`), then the user's, then
`GraphDrawing` (the graph's SVG and HTML, drawn while XLA compiles) and `Reporting`
(TensorBoard, Weights & Biases, the learning curve), which sees every number the others added
to a row.

A hook raising stops the run as a failed call does: the last good checkpoint stays.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from components.training.reporting.reporter import Reporter
from components.training.run.background import Background

# `loop` below is the `loop.TrainingLoop` that calls the hooks, which imports this module
TrainingLoop = Any

CHECKPOINT_SECONDS = 30.0  # `Checkpoints`' defaults; 0: after every call
CHECKPOINT_SHARE = 0.05

class Callback:
    """Hooks on the training loop; each does nothing unless overridden. `loop` is the
    `TrainingLoop`: `loop.exe` (the executor: its `state`, its APIs), `loop.counters`
    (`call`, `iteration`, `env_steps`), `loop.run_dir`, `loop.kept` (the metrics rows kept
    from before, on resume)."""

    def on_start(self, loop: TrainingLoop) -> None:
        """Before the first call of this process (after a resumed run's state is loaded)."""

    def on_rows(self, loop: TrainingLoop, rows: list[dict[str, Any]]) -> bool | None:
        """The rows of a call (dicts of `iteration`, `env_steps`, `wall_time`,
        `episode_return_mean` and the algorithm's numbers), before they are written: add
        numbers to them here. Return False to end the run after this call (it is then
        finished: saved, reported)."""
        return None

    def after_call(self, loop: TrainingLoop) -> None:
        """After a call's rows are written to `metrics.jsonl`."""

    def on_end(self, loop: TrainingLoop, outcome: str) -> None:
        """When the loop ends, whatever the reason: `outcome` is "finished", "interrupted"
        (Ctrl-C) or "failed" (an error is on its way)."""


class CallbackList(Callback):
    """Several callbacks, called in order. Every `on_end` runs even when one raises: the
    first error is raised after the last, and the callbacks after it see "failed"."""

    def __init__(self, callbacks: Sequence[Callback]):
        for callback in callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"train: callbacks must be components.training.Callback "
                                f"instances, got {callback!r} ({type(callback).__name__})")
        self.callbacks = list(callbacks)

    def on_start(self, loop: TrainingLoop) -> None:
        """Each callback's `on_start`, in order."""
        for callback in self.callbacks:
            callback.on_start(loop)

    def on_rows(self, loop: TrainingLoop, rows: list[dict[str, Any]]) -> bool | None:
        """Each callback's `on_rows`, in order; False when any answered False."""
        go_on = True
        for callback in self.callbacks:
            go_on = callback.on_rows(loop, rows) is not False and go_on
        return go_on

    def after_call(self, loop: TrainingLoop) -> None:
        """Each callback's `after_call`, in order."""
        for callback in self.callbacks:
            callback.after_call(loop)

    def on_end(self, loop: TrainingLoop, outcome: str) -> None:
        """Each callback's `on_end`, in order, all of them (see the class)."""
        error: BaseException | None = None
        for callback in self.callbacks:
            try:
                callback.on_end(loop, outcome if error is None else "failed")
            except BaseException as raised:  # the others still end; the first is raised
                error = error or raised
        if error is not None:
            raise error


class Checkpoints(Callback):
    """A checkpoint (`loop.save()`: the state and the counters) after the call that makes
    `seconds` since the last one, less often when saving takes more than `share` of that; and
    at the end, when the state is whole (every call that changed it returned good rows) and
    newer than the checkpoint. `seconds=0`: after every call. Defaults: CHECKPOINT_SECONDS,
    CHECKPOINT_SHARE as the run starts."""

    def __init__(self, seconds: float | None = None, share: float | None = None):
        self.given = seconds, share

    def on_start(self, loop: TrainingLoop) -> None:
        """Start the clock; the defaults are read now."""
        seconds, share = self.given
        self.seconds = CHECKPOINT_SECONDS if seconds is None else seconds
        self.share = CHECKPOINT_SHARE if share is None else share
        self.last, self.every = time.perf_counter(), self.seconds

    def after_call(self, loop: TrainingLoop) -> None:
        """Save when one is due (the call's rows are written: the state is whole)."""
        if time.perf_counter() - self.last < self.every:
            return
        before = time.perf_counter()
        loop.save()
        self.last = time.perf_counter()
        self.every = max(self.seconds, (self.last - before) / self.share) if self.seconds \
            else 0.0

    def on_end(self, loop: TrainingLoop, outcome: str) -> None:
        """Save a whole state newer than the checkpoint."""
        if loop.counters.call != loop.saved_call and loop.state_is_whole():
            loop.save()


class Periodic(Callback):
    """Work done after the calls that pass a multiple of some steps, by a worker `make(kept)`
    makes when the run starts (from the rows kept from before a resume): its
    `after_call(exe, rows)` sees every call's rows (and may add numbers to them), its `close()`
    ends it. The trainer's: the evaluation while training (`--eval-every`, `--save-best`:
    `evaluation.periodic_evaluation.Evaluator`) and videos (`--video-every`:
    `reporting.periodic_video.VideoRecorder`)."""

    def __init__(self, make: Callable[[list[dict[str, Any]]], Any]):
        self.make, self.worker = make, None

    def on_start(self, loop: TrainingLoop) -> None:
        """Make the worker."""
        self.worker = self.make(loop.kept)

    def on_rows(self, loop: TrainingLoop, rows: list[dict[str, Any]]) -> None:
        """The worker's `after_call`."""
        self.worker.after_call(loop.exe, rows)

    def on_end(self, loop: TrainingLoop, outcome: str) -> None:
        """The worker's `close`."""
        if self.worker is not None:
            self.worker.close()


class GraphDrawing(Callback):
    """Draws work a run needs but not at once on a thread (`Background`: the graph's SVG and
    HTML, started when made, while XLA compiles); the end waits for it and raises its error."""

    def __init__(self, *tasks: Callable[[], Any]):
        self.background = Background(*tasks)

    def on_end(self, loop: TrainingLoop, outcome: str) -> None:
        """Wait for the drawing; raise its error."""
        self.background.join()


class Reporting(Callback):
    """TensorBoard events, Weights & Biases (`track`) and the learning curve, written by the
    `Reporter` child process: the events restart as the kept rows, every row is sent, the
    curve is drawn at the end (titled `title`, "(interrupted)" after Ctrl-C)."""

    def __init__(self, reporter: Reporter, title: str):
        self.reporter, self.title = reporter, title

    def on_start(self, loop: TrainingLoop) -> None:
        """The TensorBoard events become the kept rows."""
        self.reporter.restart(loop.kept)

    def on_rows(self, loop: TrainingLoop, rows: list[dict[str, Any]]) -> None:
        """Send the rows to the reporting process."""
        self.reporter.add(rows)

    def on_end(self, loop: TrainingLoop, outcome: str) -> None:
        """Draw the curve (finished, interrupted) and stop the reporting process."""
        run = loop.run_dir
        if outcome == "finished":
            self.reporter.finish(run.metrics_path, run.curve_path, self.title)
            return
        if outcome == "interrupted":  # the curve of what was trained
            with contextlib.suppress(Exception):  # the interrupt is the error to see
                self.reporter.finish(run.metrics_path, run.curve_path,
                                     f"{self.title} (interrupted)")
        self.reporter.close()


__all__ = ["Callback", "CallbackList", "Checkpoints", "GraphDrawing", "Periodic", "Reporting"]
