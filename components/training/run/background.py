"""`Background`: work a training run needs but not at once (drawing the graph), done on a
thread while XLA compiles, which releases the GIL. `join()` waits for it and raises what it
raised."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Background:
    """Runs `tasks` one after another on a daemon thread; `join` re-raises the first error."""
    def __init__(self, *tasks: Callable[[], Any]):
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(tasks,), daemon=True,
                                       name="metagraph-background")
        self.thread.start()

    def _run(self, tasks: tuple[Callable[[], Any], ...]) -> None:
        try:
            for task in tasks:
                task()
        except BaseException as error:  # handed to the caller by join()
            self.error = error

    def join(self) -> None:
        """Wait for the tasks, raising the error of one that failed."""
        self.thread.join()
        if self.error is not None:
            raise self.error
