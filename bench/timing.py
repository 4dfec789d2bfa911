"""The timing loop and the fresh processes the bench/ scripts share (imported as `timing`:
each script's own directory is first on `sys.path` when it runs)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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


def contender_arguments(parser: argparse.ArgumentParser) -> None:
    """The hidden `--one NAME` and `--n N` with which a script asks a fresh process of itself
    to time one contender at N environments (`in_fresh_process`)."""
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)


def in_fresh_process(script: str, *arguments: str) -> Any:
    """What `python SCRIPT ARGUMENTS` printed on its last line, read as JSON, run in a new
    Python process (no other contender's threads, caches or compiled programs beside it);
    "failed" where it failed, the tail of its error printed to stderr."""
    run = subprocess.run([sys.executable, os.path.abspath(script), *arguments],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr[-2000:], file=sys.stderr)
        return "failed"
    return json.loads(run.stdout.strip().splitlines()[-1])
