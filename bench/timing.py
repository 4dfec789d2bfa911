"""The timing loop the bench/ scripts share (imported as `timing`: each script's own
directory is first on `sys.path` when it runs)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any], rounds: int, warmup: int = 3) -> list[float]:
    """Wall seconds of each of `rounds` calls of `fn()` (which blocks until its result is
    ready), after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times
