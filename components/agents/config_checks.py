"""Validation shared by the agents' config dataclasses: every field checked with a message
that names it and says what was expected; unknown keys refused.

Every field is first checked against its annotation (`TYPES`): a `float` field takes a finite
int or float (no `inf`, no NaN), an `int` field an int, a `bool` field only true or false
(not the string "False", not 1), `tuple[int, ...]` a sequence of ints; a bool is never taken
as a number. Then the field's own rule (a range, a set of names) is checked."""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable
from typing import Any

from components.envs.environment import DOORS

Rule = tuple[Callable[[Any], bool], str]



def is_int(value: Any) -> bool:
    """Whether `value` is an int and not a bool (JSON's true is not 1 here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    """Whether `value` is a finite int or float, not a bool."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


TYPES: dict[Any, Rule] = {  # a field's annotation -> the rule every value of it must pass
    float: (is_finite_number, "a finite number"),
    int: (is_int, "an int"),
    bool: (lambda v: isinstance(v, bool), "true or false (a bool, not a string or number)"),
    str: (lambda v: isinstance(v, str), "a string"),
    tuple[int, ...]: (lambda v: isinstance(v, tuple) and all(map(is_int, v)), "a list of ints"),
}

# the rules several configs share
POSITIVE_INT: Rule = (lambda v: is_int(v) and v >= 1, "an int >= 1")
POSITIVE: Rule = (lambda v: v > 0, "a number > 0")
NON_NEGATIVE: Rule = (lambda v: v >= 0, "a number >= 0")
UNIT: Rule = (lambda v: 0 <= v <= 1, "a number in [0, 1]")
HIDDEN: Rule = (lambda v: bool(v) and all(is_int(h) and h >= 1 for h in v),
                "positive ints")
ENV_DOOR: Rule = (lambda v: v in DOORS, f"one of {DOORS}")


def check_fields(config: Any, rules: dict[str, Rule]) -> None:
    """A ValueError naming the first field of `config` that breaks its annotation's rule
    (`TYPES`) or its own rule in `rules`."""
    hints = typing.get_type_hints(type(config))
    typed = {f.name: TYPES[hints[f.name]] for f in dataclasses.fields(config)
             if hints[f.name] in TYPES}
    for field, (ok, expected) in [*typed.items(), *rules.items()]:
        value = getattr(config, field)
        try:
            good = bool(ok(value))
        except TypeError:
            good = False
        if not good:
            raise ValueError(f"{type(config).__name__}.{field}: expected {expected}, got "
                             f"{value!r}")


def from_dict(cls: type, values: dict[str, Any]) -> Any:
    """A config from a dict (TOML, JSON, flags): unknown keys are an error, and so is the old
    key "backend" (now "door")."""
    known = {f.name for f in dataclasses.fields(cls)}
    if "backend" in values:  # the old name of the environment's door
        raise ValueError(f"{cls.__name__}: the key 'backend' is now 'door' (the environment's "
                         f"door: one of {DOORS}); got backend={values['backend']!r}")
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown keys {unknown}; known: {sorted(known)}")
    values = dict(values)
    if isinstance(values.get("hidden"), list):  # JSON and TOML have lists, not tuples
        values["hidden"] = tuple(values["hidden"])
    return cls(**values)


class AgentConfig:
    """Base of the agents' config dataclasses: from a dict (unknown keys refused) and back."""

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Any:
        """The config of `values` (see `from_dict`)."""
        return from_dict(cls, values)

    def to_dict(self) -> dict[str, Any]:
        """The config as a dict of its fields."""
        return dataclasses.asdict(self)
