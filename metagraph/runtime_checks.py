"""Checks on values inside a compiled API, reported as Python exceptions after the call.

An exception raised inside an executable would leave the executor's donated state deleted, so
an API instead checks, skips its own update where the check fails, and reports:

    ok = jnp.all(priorities > 0)
    runtime_checks.require(ok, "replay.update_priorities: priorities must be > 0", priorities)
    tree = jnp.where(ok, new_tree, old_tree)

When `ok` is False at run time, the executor raises `mg.RuntimeCheckError(message)` once the
call has returned, with the state intact. The host is called back only when a check fails (a
`lax.cond` on `ok`), so a passing check costs one reduction and a branch; checks work under
`vmap` (several seeds in one executable), where both branches of the cond run and the callback
looks at every seed's `ok`.

A host callback inside a loop (`mg.scan`) slows the whole loop down (an environment step
checked with `require` made a PPO training call a third slower), so checks that run in a loop
use `require_once` instead: the first failure's values are kept in the component's own state
and `reporting(pure)`, which the backends wrap around every root API, reports them with one
`require` after the API has run, outside any loop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import wraps
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metagraph import context
from metagraph.errors import RuntimeCheckError

_local = threading.local()  # what `require_once` noted while tracing, per tracing thread
# Reports are kept for the whole process, not per thread: XLA runs the host callback of a large
# program on one of its own threads (and may finish the program after the call returned), so
# the report is taken by the next check of whichever thread called; with several threads
# calling APIs at once, a failing check may be raised in another thread's call.
_pending: list[str] = []
# reports added and not yet taken: read without the lock, so that a call with nothing to
# report (almost every call) costs one global read in `raise_pending`
_outstanding = 0
_lock = threading.Lock()


def _add(text: str) -> None:
    global _outstanding
    with _lock:
        _pending.append(text)
        _outstanding += 1


def _take() -> list[str]:
    """The reports not yet taken, removed."""
    global _outstanding
    with _lock:
        pending = _pending[:]
        _pending.clear()
        _outstanding = 0
    return pending


def require(ok: jax.Array, message: str | Callable[..., str], *values: Any) -> None:
    """Report `message` (or `message(*values)` as NumPy) when `ok` (a bool array: all of it
    must hold) is False at run time."""
    if context.initializing():
        return  # placeholder inputs while state is created
    _local.traced = getattr(_local, "traced", 0) + 1

    def report(ok_value, *host_values):
        if not np.all(ok_value):
            text = message(*map(np.asarray, host_values)) if callable(message) else message
            _add(text)

    # a debug callback, unlike an io_callback, may sit in a cond under vmap
    ok = jnp.all(ok)
    jax.lax.cond(ok, lambda *_: None, lambda *args: jax.debug.callback(report, *args),
                 ok, *values)


def checks_traced() -> int:
    """How many `require` checks this thread has traced so far: a program traced between two
    readings that differ can report, and its caller must wait for it to finish before
    `raise_pending` (XLA may run a large program, and its callback, after the call returned)."""
    return getattr(_local, "traced", 0)


def raise_pending() -> None:
    """Raise the first check reported since the last call, if any (see `_pending`)."""
    if not _outstanding:
        return
    pending = _take()
    if pending:
        raise RuntimeCheckError(pending[0] + (f" (and {len(pending) - 1} more)"
                                              if len(pending) > 1 else ""))


def discard_pending() -> None:
    """Forget the checks reported so far (the call that reported them failed)."""
    if _outstanding:
        _take()


FAILED, VALUES = "failed_check", "failed_check_values"  # the state require_once keeps


def require_once(component: Any, ok: jax.Array, message: Callable[..., str], *values: Any
                 ) -> None:
    """`require` for checks inside loops: when `ok` is False, `values` of the first failure in
    the call are kept in `component`'s state (entries `failed_check` and
    `failed_check_values`) and `message(*values)` is reported once the root API has run (see
    `reporting`), with no host callback inside the loop. One such check per component."""
    zeros = jax.tree.map(jnp.zeros_like, values)
    failed = component.get_state(FAILED, lambda key: jnp.zeros(jnp.shape(ok)[:0], bool))
    kept = component.get_state(VALUES, lambda key: zeros)
    bad = ~jnp.all(ok)
    first = bad & ~failed
    component.set_state(FAILED, failed | bad)
    component.set_state(VALUES, jax.tree.map(lambda old, new: jnp.where(first, new, old),
                                             kept, values))
    if not context.initializing():
        _local.__dict__.setdefault("once", {})[component.scope] = message


def reporting(pure: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
    """`pure` (`(state, *inputs) -> (state', outputs)`, a root API) followed by the report of
    every `require_once` that failed during it, and the reset of what it kept (so a refused
    call leaves these entries as they were)."""

    @wraps(pure)
    def run(state: Any, *inputs: Any) -> tuple[Any, Any]:
        outer = _local.__dict__.pop("once", None)
        try:
            state, outputs = pure(state, *inputs)
            checks = _local.__dict__.pop("once", {})
        finally:
            if outer is not None:
                _local.__dict__["once"] = outer
        for scope, message in checks.items():
            entries = state[scope]
            require(~entries[FAILED], message, *entries[VALUES])
            state = {**state, scope: {**entries, FAILED: jnp.zeros_like(entries[FAILED]),
                                      VALUES: jax.tree.map(jnp.zeros_like, entries[VALUES])}}
        return state, outputs

    return run
