"""The `metagraph` command's entry point: Ctrl-C held from its first instant.

Importing the command line takes seconds (JAX, the agents); Python's own SIGINT handler would
raise `KeyboardInterrupt` at whatever line runs then, and one raised inside a
garbage-collection callback (JAX registers one) is printed as "Exception ignored" and lost:
the command went on. Here a Ctrl-C during the imports is only noted, and the command stops
once they are done (exit status 130); from there `components.training.cli` and the trainer
hold it back themselves (`components/training/run/interrupts.py`)."""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


def main(argv: list[str] | None = None,
         load: Callable[[], ModuleType] = lambda: importlib.import_module(
             "components.training.cli")) -> Any:
    """Import the command line (`load`), noting a Ctrl-C meanwhile, then run it on `argv`."""
    noted: list[int] = []
    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # (not if ignored)
    if ours:
        signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        cli = load()
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if noted:
        print("\nmetagraph: interrupted while starting", file=sys.stderr)
        raise SystemExit(130)
    return cli.main(argv)
