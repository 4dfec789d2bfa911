"""TensorBoard event files of a run's metrics, written on a thread of their own.

tensorboardX spends about 70 µs of Python per scalar; a PPO run logs a few thousand, which on
the training thread would sit between executable calls. Here the training thread only queues
the rows of each call; the writer thread turns them into scalars (x axis: environment steps)
while the next call runs, and `close` waits for the last of them."""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any

_STOP = object()


class TensorBoardLog:
    def __init__(self, directory: Path):
        self.directory = directory
        self._rows: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name="metagraph-tensorboard",
                                        daemon=True)
        self._thread.start()

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Queue metrics rows: their numbers become scalars at step `row["env_steps"]`."""
        self._rows.put(rows)

    def close(self) -> None:
        """Write everything queued, close the files; re-raise a failure of the writer."""
        self._rows.put(_STOP)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _write(self) -> None:
        writer = None
        try:
            from tensorboardX import SummaryWriter

            writer = SummaryWriter(str(self.directory), flush_secs=10)
            while (rows := self._rows.get()) is not _STOP:
                for row in rows:
                    for name, value in row.items():
                        if name not in ("iteration", "env_steps") and \
                                isinstance(value, int | float) and not isinstance(value, bool):
                            writer.add_scalar(name, value, global_step=row["env_steps"])
                    time.sleep(0)  # hand Python's lock back: the training thread goes first
        except BaseException as error:  # reported by close(), on the training thread
            self._error = error
            while self._rows.get() is not _STOP:  # let close() return
                pass
        finally:
            if writer is not None:
                writer.close()
