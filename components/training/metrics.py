"""`Row`: one iteration's metrics, the typed record an algorithm's `run` (or its distributed
`update`) returns, one per iteration done, and `check_rows`, the door every row passes before
the trainer counts its steps or writes it.

A row holds `steps` (the environment steps the iteration took: an int >= 1), the mean return of
the episodes that ended in it (`episode_return_mean`, None when none did) and any other numbers
to record (`extra`: `loss`, `bits`, ...; a number, a list of numbers, or None). A row reads like
the dict it is written as (`row["loss"]`, `set(row)`), so code that read the rows of the
previous protocol's dicts reads these.

The previous protocol's rows, plain dicts with the keys `steps` and `episode_return_mean` and
any others, are still accepted: `check_rows` makes them `Row`s with the same checks.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

REQUIRED = ("steps", "episode_return_mean")


class MetricsError(ValueError):
    """A metrics row (or the value holding the rows) that the trainer cannot count or record;
    the message is one line naming the algorithm, the row and what was wrong."""


@dataclasses.dataclass(frozen=True)
class Row(Mapping[str, Any]):
    """One iteration's metrics (see the module docstring).

    Attributes:
        steps: environment steps the iteration took (all seeds' mean), an int >= 1.
        episode_return_mean: the mean return of the episodes that ended in it, or None.
        extra: further numbers by name (`loss`, `bits`, ...): a number, a list of numbers
            (one per seed) or None.
    """

    steps: int
    episode_return_mean: float | None = None
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def with_extra(self, **values: Any) -> Row:
        """This row with more (or replaced) extra numbers."""
        return dataclasses.replace(self, extra={**self.extra, **values})

    def as_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict: steps, episode_return_mean, then the extras."""
        return {"steps": self.steps, "episode_return_mean": self.episode_return_mean,
                **self.extra}

    def __getitem__(self, name: str) -> Any:
        return self.as_dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(REQUIRED) + len(self.extra)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _steps(value: Any) -> str | None:
    """What is wrong with `value` as a row's steps, or None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if _is_number(value) and math.isfinite(value) and float(value).is_integer():
            value = int(value)  # 16.0 from a mean over seeds is 16 steps
        else:
            return f"steps must be an int >= 1, got {value!r}"
    if value < 1:
        return f"steps must be an int >= 1 (the environment steps the iteration took), " \
               f"got {value!r}"
    return None


def _extra(name: str, value: Any) -> str | None:
    """What is wrong with `value` as the extra number `name`, or None."""
    if value is None or _is_number(value):
        return None
    if isinstance(value, list | tuple) and all(v is None or _is_number(v) for v in value):
        return None
    return f"{name!r} must be a number, a list of numbers or None, got " \
           f"{type(value).__name__} {_short(value)}"


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def as_row(value: Any) -> Row:
    """`value` (a `Row`, or a dict of the previous protocol) as a checked `Row`; MetricsError
    with the one problem found (without the algorithm's name: `check_rows` adds it)."""
    if isinstance(value, Row):
        fields = value.as_dict()
    elif isinstance(value, Mapping):
        fields = dict(value)
        missing = [name for name in REQUIRED if name not in fields]
        if missing:
            raise MetricsError(f"it has no {' or '.join(missing)}")
    else:
        raise MetricsError(f"a row must be a components.training.Row (or a dict), got "
                           f"{type(value).__name__}")
    if (problem := _steps(fields["steps"])) is not None:
        raise MetricsError(problem)
    mean = fields["episode_return_mean"]
    if mean is not None and not (_is_number(mean) and not math.isnan(mean)):
        raise MetricsError(f"episode_return_mean must be a number, or None when no episode "
                           f"ended, got {mean!r}")
    extra = {name: v for name, v in fields.items() if name not in REQUIRED}
    for name, v in extra.items():
        if not isinstance(name, str):
            raise MetricsError(f"its names must be strings, got {name!r}")
        if (problem := _extra(name, v)) is not None:
            raise MetricsError(problem)
    return Row(int(fields["steps"]), None if mean is None else float(mean), extra)


def check_rows(algorithm: str, rows: Any, source: str = "run()") -> list[Row]:
    """The rows `source` of `algorithm` returned, checked (see `as_row`): a non-empty list or
    tuple of rows. MetricsError, one line naming the algorithm, the row and the problem."""
    if not isinstance(rows, Sequence) or isinstance(rows, str | bytes | Mapping):
        raise MetricsError(f"{algorithm}: {source} must return a list of metrics rows (one "
                           f"per iteration done), got {type(rows).__name__} {_short(rows)}")
    if not rows:
        raise MetricsError(f"{algorithm}: {source} returned no metrics rows; it must return "
                           f"one per iteration done (at least one)")
    checked = []
    for index, row in enumerate(rows):
        try:
            checked.append(as_row(row))
        except MetricsError as error:
            raise MetricsError(f"{algorithm}: {source} returned a bad metrics row {index} "
                               f"({error}): {_short(row)}") from None
    return checked
