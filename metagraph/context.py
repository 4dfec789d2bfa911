"""The frame an API runs in: which state it reads and writes, and who records the calls.

Components never hold arrays between calls. While a graph is traced (`mg.build`), initialised
(`graph.init_state`) or run (`graph.pure(api)`), one `Frame` is active on this thread; the
state accessors of `Component` and the `@api` wrapper read it. This is how imperative-looking
`self.get_state(...)` / `self.set_state(...)` becomes a pure `(state, inputs) -> (state', outputs)`
function, the way dm-haiku's `transform_with_state` works.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

INIT, APPLY = "init", "apply"

_local = threading.local()


class Frame:
    """The state being threaded through one run, and the stack of API nodes being executed.

    In `init` mode, state is created on first read from its initialiser and writes are
    checked but not kept (the initial value is what `init_state` returns). In `apply` mode,
    state must exist and writes replace it. `scopes` (a `metagraph.scopes.Scopes`) is the
    graph's own map from component to path: every state access and API call inside the frame
    takes its component's path from there.
    """

    def __init__(self, mode: str, scopes: Any, state: dict[str, dict[str, Any]] | None = None,
                 key: Any = None, recorder: Any = None):
        self.mode = mode
        self.scopes = scopes
        self.state = {scope: dict(vars_) for scope, vars_ in (state or {}).items()}
        self.trainable: dict[tuple[str, str], bool] = {}
        self.key = key
        self.recorder = recorder
        self.stack: list[str] = []


@contextlib.contextmanager
def active(frame: Frame) -> Iterator[Frame]:
    """A context manager making `frame` the current frame for the calls inside it (frames nest)."""
    stack = _local.__dict__.setdefault("frames", [])
    stack.append(frame)
    try:
        yield frame
    finally:
        stack.pop()


def current() -> Frame | None:
    """The innermost active frame of this thread, or None outside any graph."""
    stack = _local.__dict__.get("frames")
    return stack[-1] if stack else None


def initializing() -> bool:
    """True while state is being created (mg.build, init_state): APIs then run on placeholder
    inputs, so host side effects and runtime checks are skipped."""
    frame = current()
    return frame is not None and frame.mode == INIT
