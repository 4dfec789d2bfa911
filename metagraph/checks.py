"""Checks of plain arguments (sizes, counts) shared by every package, with one message."""

from __future__ import annotations

from typing import Any


def positive_int(value: Any, what: str) -> int:
    """`value` if it is a positive int (NumPy integers included, bool not), else ValueError
    naming `what` (e.g. `"mg.build: batch_size"`) and the value given."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < 1:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return int(value)
