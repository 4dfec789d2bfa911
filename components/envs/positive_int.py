"""The one check of a count (environments, threads) that the environment doors take."""

from __future__ import annotations

from typing import Any


def require_positive_int(where: str, name: str, value: Any) -> int:
    """`value` if it is an int >= 1 (not a bool), else a ValueError naming `where` and `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: {name} must be a positive int, got {value!r}")
    return value
