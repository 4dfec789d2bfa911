"""What an exception raised by an API's own code becomes, and the check that an API keeps no
array on `self`.

- A shape or dtype error that JAX raises while tracing (a `TypeError` or `ValueError` raised
  inside JAX or an array library it traces through, `ARRAY_LIBRARIES`) becomes a
  `SpaceError` naming the component and the API.
- Python that cannot run on traced values becomes a `TraceError` naming the fix: an `if` on an
  array (`jnp.where`, `mg.cond`), NumPy on a traced array, a comparison of the symbolic batch
  dimension (`mg.build(..., batch_size=n)`), a tracer leaked from an earlier trace.
- Any other exception (the user's own) keeps its type and traceback and gets a note naming
  the component and the API (`BaseException.add_note`).
"""

from __future__ import annotations

from typing import Any

import jax

from metagraph.errors import SpaceError, TraceError

NOTE = "metagraph: raised inside "
# A TypeError or ValueError raised inside these (a bad shape or dtype met while tracing: an
# int32 input to a haiku initialiser raises in ml_dtypes/numpy) becomes a SpaceError.
ARRAY_LIBRARIES = frozenset({"jax", "jaxlib", "numpy", "ml_dtypes", "haiku", "optax", "chex",
                             "flax", "equinox", "opt_einsum", "scipy"})

_CONTROL_FLOW = (
    "Python control flow on a traced value ({kind}): while an API is traced its arrays are "
    "abstract, so `if`, `while`, `bool()` or `int()` cannot look at their values. Choose "
    "between values with jnp.where(condition, a, b); choose between branches that call APIs "
    "or write state with mg.cond(pred, true_fn, false_fn, *operands) (mg.scan for loops)")
_TO_NUMPY = (
    "a traced array was converted to NumPy (np.asarray or a NumPy function on it): use the "
    "jax.numpy function instead; host code on values needs jax.pure_callback")
_LEAKED = (
    "an array from an earlier trace was used: an array kept on self (or in a global) between "
    "calls is a leaked tracer. Keep it as state: self.get_state(name, init) and "
    "self.set_state(name, value)")
_SYMBOLIC = (
    "a shape computation on the symbolic batch or time dimension (B, T) has no single answer "
    "({cause}). Write it for every size, or trace with concrete sizes: "
    "mg.build(..., batch_size=n) (and time_size=t)")


def translate(error: Exception, path: str, api: str, caller: str | None) -> Exception | None:
    """The exception to raise (from `error`) for `error` raised by API `path.api`, or None
    when `error` itself should propagate (it then carries a note naming the API)."""
    node = f"{path}.{api}"
    message = _explanation(error)
    if message is not None:
        return TraceError(f"{node}: {message}\n{type(error).__name__}: {_first_line(error)}",
                          component=path, api=api)
    if isinstance(error, TypeError | ValueError) and _raised_by_array_library(error):
        return SpaceError(f"{node}: JAX raised while tracing this API: "
                          f"{type(error).__name__}: {error}", component=path, api=api,
                          caller=caller or "input")
    if not any(note.startswith(NOTE) for note in getattr(error, "__notes__", ())):
        error.add_note(f"{NOTE}{node} (component '{path}', API '{api}'), called from "
                       f"{caller or 'the graph input'}")
    return None


def _explanation(error: Exception) -> str | None:
    errors = jax.errors
    if isinstance(error, errors.UnexpectedTracerError):
        return _LEAKED
    if isinstance(error, errors.TracerArrayConversionError):
        return _TO_NUMPY
    if isinstance(error, errors.ConcretizationTypeError | errors.TracerIntegerConversionError):
        return _CONTROL_FLOW.format(kind=type(error).__name__)
    if isinstance(error, errors.InconclusiveDimensionOperation):
        return _SYMBOLIC.format(cause=_first_line(error))
    return None


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [""])[0]


def _raised_by_array_library(error: Exception) -> bool:
    """Whether the innermost frame of `error`'s traceback is in one of `ARRAY_LIBRARIES`
    (a user's `raise` is in the user's own module)."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    return module.split(".", 1)[0] in ARRAY_LIBRARIES


def attributes(component: Any) -> dict[str, Any]:
    """A snapshot of `component`'s attributes, for `check_kept_arrays` after a call."""
    return dict(vars(component))


def check_kept_arrays(component: Any, before: dict[str, Any], path: str, api: str) -> None:
    """TraceError if the API stored a JAX array (or a tracer) on `self`; the attribute is put
    back as it was, so the component stays usable."""
    for attr, value in list(vars(component).items()):
        if attr.startswith("_mg_") or before.get(attr, _MISSING) is value:
            continue
        if any(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(value)):  # tracers too
            if attr in before:
                vars(component)[attr] = before[attr]
            else:
                del vars(component)[attr]
            raise TraceError(
                f"{path}.{api}: stored a JAX array on self.{attr}; a component keeps no arrays "
                f"between calls (compiled by XLA it would be a tracer leaked from the trace or "
                f"a stale constant). Keep it as state: self.get_state({attr!r}, init) to read "
                f"it and self.set_state({attr!r}, value) to write it (constants can be NumPy "
                f"arrays made in __init__)", component=path, api=api)


_MISSING = object()
