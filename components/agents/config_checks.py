"""Validation shared by the agents' config dataclasses: every field checked with a message
that names it and says what was expected; unknown keys refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from components.envs.environment import DOORS

Rule = tuple[Callable[[Any], bool], str]

# the rules several configs share
POSITIVE_INT: Rule = (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                      "an int >= 1")
POSITIVE: Rule = (lambda v: v > 0, "a number > 0")
NON_NEGATIVE: Rule = (lambda v: v >= 0, "a number >= 0")
UNIT: Rule = (lambda v: 0 <= v <= 1, "a number in [0, 1]")
HIDDEN: Rule = (lambda v: bool(v) and all(isinstance(h, int) and h >= 1 for h in v),
                "positive ints")
ENV_DOOR: Rule = (lambda v: v in DOORS, f"one of {DOORS}")


def check_fields(config: Any, rules: dict[str, Rule]) -> None:
    """A ValueError naming the first field of `config` that breaks its rule."""
    for field, (ok, expected) in rules.items():
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
    if "hidden" in values:
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
