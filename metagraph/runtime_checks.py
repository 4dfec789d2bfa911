"""Checks on values inside a compiled API, reported as Python exceptions after the call.

An exception raised inside an executable would leave the executor's donated state deleted, so
an API instead checks, skips its own update where the check fails, and reports:

    ok = jnp.all(priorities > 0)
    runtime_checks.require(ok, "replay.update_priorities: priorities must be > 0", priorities)
    tree = jnp.where(ok, new_tree, old_tree)

When `ok` is False at run time, the executor raises `mg.RuntimeCheckError(message)` once the
call has returned, with the state intact. The report is one ordered host callback per check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.experimental import io_callback

from metagraph import context
from metagraph.errors import RuntimeCheckError

_local = threading.local()


def require(ok: jax.Array, message: str | Callable[..., str], *values: Any) -> None:
    """Report `message` (or `message(*values)` as NumPy) when `ok` is False at run time."""
    if context.initializing():
        return  # placeholder inputs while state is created

    def report(ok_value, *host_values):
        if not bool(ok_value):
            text = message(*map(np.asarray, host_values)) if callable(message) else message
            _local.__dict__.setdefault("pending", []).append(text)

    io_callback(report, None, ok, *values, ordered=True)


def raise_pending() -> None:
    """Raise the first check reported on this thread since the last call, if any."""
    pending = _local.__dict__.pop("pending", None)
    if pending:
        raise RuntimeCheckError(pending[0] + (f" (and {len(pending) - 1} more)"
                                              if len(pending) > 1 else ""))
