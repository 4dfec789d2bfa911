"""Ctrl-C held back while the trainer calls the executable and saves its checkpoint.

A `KeyboardInterrupt` raised inside an executable call (from a host callback: the host and
gymnasium doors, a replay check) fails the call after its state was donated, so the state is
gone and no checkpoint can be written. Inside `deferred_interrupts()`, SIGINT only sets a flag;
the trainer looks at it between two calls (`received`) and stops there, saving the state of the
last whole call; a second Ctrl-C during that save is held back too. When the block ends, the
previous handler is restored and a held-back SIGINT is delivered to it (normally: a
`KeyboardInterrupt`).

A call that never returns (a hung host callback, a user's `run` in an endless loop) would hold
the run forever, and Python's own handler cannot run while the main thread is inside native
code. So a watcher thread sees every SIGINT too (through `signal.set_wakeup_fd`): a second
Ctrl-C while a call is under way (`calling`, which the training loop sets around each call;
not while a checkpoint is written) ends the process at once with status 130, leaving the
checkpoint on disk as the last save wrote it.

    with deferred_interrupts() as interrupts:
        while ...:
            one_call()
            if interrupts.received:
                raise KeyboardInterrupt

A run's start-up (building, lowering, starting samplers) is held the same way
(`trainer._train`), stopping between its phases: Python's own handler raises
`KeyboardInterrupt` at whatever Python line runs, and one raised inside a garbage-collection
callback (JAX registers one) or a `__del__` is printed as "Exception ignored" and lost, so the
run trained on (found by sending SIGINT at random moments of a pipelined start-up).

A process started with SIGINT ignored (a job a shell without job control started with `&`:
the shell's way of keeping the terminal's Ctrl-C, meant for the job in front, away from it)
keeps it ignored, as Python itself does: nothing is held back, and Ctrl-C stops neither the
start-up nor the run. (It used to take SIGINT over once training began, so a Ctrl-C meant
for another job stopped it, and one sent in its first seconds was lost: issue 55, serious 6.)
"""

from __future__ import annotations

import os
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
        self.calling = False  # set while a call is under way: a second Ctrl-C ends the run
        self.seen = 0  # SIGINTs the watcher saw

    def _watch(self, read_fd: int) -> None:
        """Count SIGINTs from the wakeup pipe; end the process on the second during a call."""
        # never a target of SIGINT itself: the main thread's handler is the one that counts
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        with os.fdopen(read_fd, "rb", buffering=0) as wakeups:
            while data := wakeups.read(64):
                self.seen += data.count(signal.SIGINT)
                if self.seen >= 2 and self.calling:
                    self._exit()

    @staticmethod
    def _exit() -> None:
        print("\nmetagraph train: interrupted twice during a call; stopping now, the "
              "checkpoint on disk is the last one saved", file=sys.stderr, flush=True)
        os._exit(130)

    def stop_if_received(self) -> None:
        """A `KeyboardInterrupt` here if a SIGINT was held back: a point where stopping is
        safe (between a run's start-up phases)."""
        if self.received:
            raise KeyboardInterrupt

    def _handler(self, signum: int, frame: Any) -> None:
        self.received += 1
        if self.received == 1:
            print("\nmetagraph train: interrupted; stopping after the current call and saving "
                  "its checkpoint", file=sys.stderr, flush=True)


@contextmanager
def deferred_interrupts() -> Iterator[Interrupts]:
    """Hold SIGINT back inside the block (see the module docstring). Outside the main thread,
    where Python cannot handle signals, and where SIGINT is ignored (the parent's choice),
    nothing is held back. A block inside another takes over what the outer one held back
    (the start-up's Ctrl-C stops the training loop at once)."""
    interrupts = Interrupts()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield interrupts
        return
    previous = signal.signal(signal.SIGINT, interrupts._handler)
    outer = getattr(previous, "__self__", None)
    if isinstance(outer, Interrupts):  # inside another block: what it held back counts here
        interrupts.received, outer.received = outer.received, 0
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=interrupts._watch, args=(read_fd,), daemon=True,
                     name="metagraph-interrupts").start()
    try:
        yield interrupts
    finally:
        signal.signal(signal.SIGINT, previous)  # first: nothing below may keep ours installed
        try:
            signal.set_wakeup_fd(previous_fd)
        except (OSError, ValueError):  # the previous fd was closed meanwhile (a loop ended)
            signal.set_wakeup_fd(-1)
        os.close(write_fd)  # the watcher's read ends, then it closes its end
        if interrupts.received and sys.exc_info()[0] is None:
            signal.raise_signal(signal.SIGINT)  # the previous handler's turn
