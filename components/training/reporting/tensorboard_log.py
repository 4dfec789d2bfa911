"""TensorBoard event files of a run's metrics: one `Event` per metrics row, holding all of the
row's numbers as scalars at step `row["env_steps"]`, written synchronously with tensorboardX's
`EventsWriter` (its TFRecord framing and protobuf classes).

tensorboardX's `SummaryWriter` spends about 70 µs per scalar in Python (and passes every event
through a multiprocessing queue to a thread of its own); a PPO run logs a few thousand scalars.
One event per row costs about 30 µs. The trainer writes them in its reporting process
(`reporter.py`); this module imports nothing of the project's.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

FLUSH_SECONDS = 5.0  # how stale the file TensorBoard reads may be while a run goes on


class TensorBoardLog:
    """Writes scalar rows as TensorBoard event files in `directory` (tensorboardX's writer,
    without TensorFlow)."""
    def __init__(self, directory: Path):
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto import event_pb2, summary_pb2

        self._event, self._summary = event_pb2.Event, summary_pb2.Summary
        self._new_writer = lambda: EventsWriter(str(directory / "events"))
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._writer = self._new_writer()
        self._flushed = time.monotonic()

    def restart(self, rows: list[dict[str, Any]]) -> None:
        """Delete the directory's event files and write `rows` into a new one, flushed."""
        self._writer.close()
        for old in self.directory.glob("events.out.tfevents.*"):
            old.unlink()
        self._writer = self._new_writer()
        self.add(rows)
        self._writer.flush()
        self._flushed = time.monotonic()

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Write metrics rows: every number but the step counters becomes a scalar."""
        now = time.time()
        for row in rows:
            values = [self._summary.Value(tag=name, simple_value=value)
                      for name, value in row.items()
                      if name not in ("iteration", "env_steps")
                      and isinstance(value, int | float) and not isinstance(value, bool)]
            self._writer.write_event(self._event(wall_time=now, step=row["env_steps"],
                                                 summary=self._summary(value=values)))
        if time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self._writer.flush()
            self._flushed = time.monotonic()

    def close(self) -> None:
        """Flush and close the event file."""
        self._writer.close()
