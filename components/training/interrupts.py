"""Ctrl-C held back while the trainer calls the executable and saves its checkpoint.

A `KeyboardInterrupt` raised inside an executable call (from a host callback: the host and
gymnasium doors, a replay check) fails the call after its state was donated, so the state is
gone and no checkpoint can be written. Inside `deferred_interrupts()`, SIGINT only sets a flag;
the trainer looks at it between two calls (`received`) and stops there, saving the state of the
last whole call; a second Ctrl-C during that save is held back too. When the block ends, the
previous handler is restored and a held-back SIGINT is delivered to it (normally: a
`KeyboardInterrupt`).

    with deferred_interrupts() as interrupts:
        while ...:
            one_call()
            if interrupts.received:
                raise KeyboardInterrupt
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Interrupts:
    """How many SIGINTs arrived while they were held back."""

    def __init__(self) -> None:
        self.received = 0

    def _handler(self, signum: int, frame: Any) -> None:
        self.received += 1
        if self.received == 1:
            print("\nmetagraph train: interrupted; stopping after the current call and saving "
                  "its checkpoint", file=sys.stderr, flush=True)


@contextmanager
def deferred_interrupts() -> Iterator[Interrupts]:
    """Hold SIGINT back inside the block (see the module docstring). Outside the main thread,
    where Python cannot handle signals, nothing is held back."""
    interrupts = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield interrupts
        return
    previous = signal.signal(signal.SIGINT, interrupts._handler)
    try:
        yield interrupts
    finally:
        signal.signal(signal.SIGINT, previous)
        if interrupts.received and sys.exc_info()[0] is None:
            signal.raise_signal(signal.SIGINT)  # the previous handler's turn
