"""`Reporter`: a child process that writes a run's TensorBoard events and draws its learning
curve, so that the training process never imports tensorboardX or matplotlib (about 0.8 s of
Python) nor spends time on them between executable calls.

    reporter = Reporter(run_path)    # starts now: imports tensorboardX while the agent compiles
    reporter = Reporter(run_path, track="project")   # and logs to Weights & Biases (wandb_log)
    reporter.restart(kept_rows)      # the events become exactly these rows (new run, resume)
    reporter.add(rows)               # metrics rows -> DIR/tensorboard/ (a pipe write)
    reporter.finish(metrics_path, curve_path, title)   # draws curve.png, waits, raises
    reporter.close()                 # or: stop without drawing (training failed)

The child reads one JSON request per line from its standard input and stops at its end, so it
also goes away when the training process dies. It runs as a script (this file), not as
`components.training.reporting.reporter`: importing the packages above it would import JAX.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


class Reporter:
    """A child process that writes a run's TensorBoard events and learning curve from the rows
    it is sent."""
    def __init__(self, run_path: Path, track: str | None = None):
        # stderr to a file: a pipe read only at the end could fill up and stall the child
        self._errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (lives as the child)
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(run_path / "tensorboard"),
             *([] if track is None else [track])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errors, text=True)

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Send metrics rows to the child."""
        self._send({"rows": rows})

    def restart(self, rows: list[dict[str, Any]]) -> None:
        """Replace every TensorBoard event of the run with `rows` (the metrics kept when a
        run starts or resumes): events a killed run never flushed come back, and those after
        the checkpoint resumed from go."""
        self._send({"restart": rows})

    def finish(self, metrics: Path, curve: Path, title: str) -> None:
        """Draw the learning curve from the metrics file; returns when it is written (every
        event before it is, too), while the child exits."""
        self._send({"curve": str(curve), "metrics": str(metrics), "title": title})
        if self._process.stdout.readline().strip() != "done":
            self._fail()

    def close(self) -> None:
        """Stop after the events sent so far, without drawing (training failed or was
        interrupted: that error is the one to see, so this raises nothing)."""
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()

    def _send(self, request: dict[str, Any]) -> None:
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except BrokenPipeError:  # the child failed: say why
            self._fail()

    def _fail(self) -> None:
        code = self._process.wait()
        self._errors.seek(0)
        raise RuntimeError(f"the run's reporting process (TensorBoard events, curve.png) "
                           f"failed with exit code {code}:\n{self._errors.read().strip()}")


def _main(tensorboard_dir: str, track: str | None = None) -> None:
    # Ctrl-C is for the training process, which then closes this one's input: the events sent
    # so far are written, and the interruption is not reported as this process failing
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # tensorboardX imports torch when it is installed (1.5 s) for tensors this process never
    # sees: it writes numbers only
    sys.modules.setdefault("torch", None)
    # siblings, imported as top-level modules (this file's folder is on sys.path)
    from learning_curve import plot_learning_curve, read_metrics
    from tensorboard_log import TensorBoardLog

    curve, warm = None, False
    logs: list[Any] = [TensorBoardLog(Path(tensorboard_dir))]  # imported while compiling
    if track is not None:
        from wandb_log import WandbLog

        logs.append(WandbLog(Path(tensorboard_dir).parent, track))
    try:
        for line in sys.stdin:
            request = json.loads(line)
            if "restart" in request:
                for log in logs:
                    log.restart(request["restart"])
                continue
            if "rows" not in request:
                curve = request
                break
            for log in logs:
                log.add(request["rows"])
            if not warm:  # training runs on one core now: import matplotlib, load its fonts
                plot_learning_curve([], io.BytesIO(), "")
                warm = True
        if curve is not None:
            plot_learning_curve(read_metrics(curve["metrics"]), curve["curve"], curve["title"])
            for log in logs[1:]:
                log.curve(curve["curve"])
    finally:
        for log in logs:
            log.close()
    if curve is not None:
        print("done", flush=True)

if __name__ == "__main__":
    _main(*sys.argv[1:3])
