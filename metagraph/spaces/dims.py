"""The symbolic batch and time dimensions used while tracing a graph.

Both come from one `jax.export.symbolic_shape` call so that they share a scope and can be
mixed in one expression (`B*T`). Shapes that flowed during `mg.build` print as `float32[B,4]`
rather than with a made-up size, and a batch dimension can never be confused with a data
dimension that happens to have the same length.
"""

from __future__ import annotations

from typing import Any

from jax import export

BATCH, TIME = export.symbolic_shape("B, T")


def is_dim(value: Any, dim: Any) -> bool:
    """True if `value` (an int or a symbolic dimension) is the dimension `dim`."""
    if dim is None:
        return False
    try:
        return bool(value == dim)
    except Exception:  # an inconclusive symbolic comparison
        return False


def format_dim(value: Any) -> str:
    """A dimension as shown in labels and errors: a symbolic one by its name (`B`), a size as a
    number."""
    return str(value)
