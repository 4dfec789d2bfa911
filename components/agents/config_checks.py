"""Validation shared by the agents' config dataclasses: every field checked with a message
that names it and says what was expected; unknown keys refused.

Every field is first checked against its annotation (`TYPES`): a `float` field takes a finite
int or float (no `inf`, no NaN), an `int` field an int, a `bool` field only true or false
(not the string "False", not 1), `tuple[int, ...]` a sequence of ints; a bool is never taken
as a number. Then the field's own rule (a range, a set of names) is checked.

Checking is automatic: `AgentConfig.__post_init__` runs `check_fields` with the class's
`rules()`, so a user's config dataclass deriving from `AgentConfig` has its fields' types
checked when it is made (from Python, `--config` or `--set`) and adds its own rules by
overriding `rules()`.

A config class with a `defaults_file` (a TOML file shipped with the package) has
per-environment defaults: `for_env(env_id, values)` starts from them."""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from components.agents.renamed_fields import new_names
from components.envs.engine.catalogue import canonical_id, family_of, num_players
from components.envs.environment import DOORS
from metagraph.suggestions import did_you_mean

Rule = tuple[Callable[[Any], bool], str]



def is_int(value: Any) -> bool:
    """Whether `value` is an int and not a bool (JSON's true is not 1 here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    """Whether `value` is a finite int or float, not a bool."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


def is_env_kwargs(value: Any) -> bool:
    """Whether `value` is a table of an environment's keyword arguments: str keys, each value
    a finite number, a bool or a string."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and (isinstance(v, bool | str) or is_finite_number(v))
        for k, v in value.items())


TYPES: dict[Any, Rule] = {  # a field's annotation -> the rule every value of it must pass
    float: (is_finite_number, "a finite number"),
    int: (is_int, "an int"),
    bool: (lambda v: isinstance(v, bool), "true or false (a bool, not a string or number)"),
    str: (lambda v: isinstance(v, str), "a string"),
    tuple[int, ...]: (lambda v: isinstance(v, tuple) and all(map(is_int, v)), "a list of ints"),
    dict[str, Any]: (is_env_kwargs, "a table of keyword arguments (str keys; each value a "
                                    "finite number, a bool or a string)"),
}

# the rules several configs share
POSITIVE_INT: Rule = (lambda v: is_int(v) and v >= 1, "an int >= 1")
POSITIVE: Rule = (lambda v: v > 0, "a number > 0")
NON_NEGATIVE: Rule = (lambda v: v >= 0, "a number >= 0")
UNIT: Rule = (lambda v: 0 <= v <= 1, "a number in [0, 1]")
# the largest sizes a config takes: above them a graph cannot be built here (int32 indices of
# the replay's trees, eager per-environment arrays, layers of width^2 parameters); between
# them and what fits in memory, the trainer refuses a state too large for this machine
MAX_ENVS = 2**20
MAX_BUFFER = 2**28
MAX_WIDTH = 2**16
HIDDEN: Rule = (lambda v: bool(v) and all(is_int(h) and 1 <= h <= MAX_WIDTH for h in v),
                f"positive ints up to {MAX_WIDTH}")
NUM_ENVS: Rule = (lambda v: is_int(v) and 1 <= v <= MAX_ENVS, f"an int in [1, {MAX_ENVS}]")
BUFFER_SIZE: Rule = (lambda v: is_int(v) and 1 <= v <= MAX_BUFFER,
                     f"an int in [1, {MAX_BUFFER}]")
ENV_DOOR: Rule = (lambda v: v in DOORS, f"one of {DOORS}")
MAX_PLAYOUTS = 4096
PLAYOUTS: Rule = (lambda v: is_int(v) and 0 <= v <= MAX_PLAYOUTS,
                  f"an int in [0, {MAX_PLAYOUTS}] (every position the search expands is copied "
                  f"that many times, for every game at once)")
CNN_CHANNELS: Rule = (lambda v: not v or HIDDEN[0](v), f"empty (no CNN) or {HIDDEN[1]}")
CNN_SIZES: Rule = (lambda v: POSITIVE_INT[0](v) or (isinstance(v, tuple) and bool(v) and all(
    POSITIVE_INT[0](k) for k in v)), "a positive int, or a list of them (one per convolution)")
CNN_PADDING: Rule = (lambda v: v in ("SAME", "VALID"), "'SAME' or 'VALID'")


def check_fields(config: Any, rules: dict[str, Rule]) -> None:
    """A ValueError naming the first field of `config` that breaks its annotation's rule
    (`TYPES`) or its own rule in `rules`."""
    try:
        hints = typing.get_type_hints(type(config))
    except (NameError, TypeError):  # annotations not resolvable here: only the rules
        hints = {}
    names = [f.name for f in dataclasses.fields(config)]
    typed = {name: TYPES[hints[name]] for name in names if hints.get(name) in TYPES}
    # the rules in the fields' order (a config's own rule for a shared field replaces the
    # shared one where the dict first had it), then any rule of a name that is no field
    ordered = [(name, rules[name]) for name in names if name in rules]
    ordered += [(name, rule) for name, rule in rules.items() if name not in names]
    for field, (ok, expected) in [*typed.items(), *ordered]:
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
    key "backend" (now "door"); a renamed field's old key is read as its new one, with a
    DeprecationWarning (`renamed_fields`)."""
    values = new_names(cls, values)
    known = {f.name for f in dataclasses.fields(cls)}
    if "backend" in values:  # the old name of the environment's door
        raise ValueError(f"{cls.__name__}: the key 'backend' is now 'door' (the environment's "
                         f"door: one of {DOORS}); got backend={values['backend']!r}")
    unknown = sorted(set(values) - known)
    if unknown:
        hints = "".join(did_you_mean(key, known) for key in unknown)
        raise ValueError(f"{cls.__name__}: unknown keys {unknown}{hints}; the keys are "
                         f"{sorted(known)}")
    values = dict(values)
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        hints = {}
    for key, value in values.items():  # JSON and TOML have lists, not tuples
        hint = hints.get(key)
        kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        if isinstance(value, list) and any(typing.get_origin(k) is tuple for k in kinds):
            values[key] = tuple(value)
    return cls(**values)


class AgentConfig:
    """Base of the agents' config dataclasses: every field checked when a config is made
    (`check_fields`: its annotation's type, then its rule in `rules()`), from a dict (unknown
    keys refused) and back, and for an environment from the defaults shipped in
    `defaults_file` (when set).

    A subclass is a frozen dataclass; it adds rules by overriding `rules()`, not
    `__post_init__` (one that does must call `super().__post_init__()`)::

        @dataclasses.dataclass(frozen=True)
        class MyConfig(AgentConfig):
            num_envs: int = 4
            gamma: float = 0.99

            def rules(self):
                return {"num_envs": POSITIVE_INT, "gamma": UNIT}
    """

    defaults_file: ClassVar[Path | None] = None
    """A TOML file of per-environment defaults: `[defaults."<id>"]` tables, each optionally
    naming a `group` whose `[groups.<name>]` table it overrides."""

    def __post_init__(self) -> None:
        """Check every field (`check_fields` with `rules()`): a ValueError names the first
        field that breaks its type or its rule."""
        check_fields(self, self.rules())

    def rules(self) -> dict[str, Rule]:
        """Each field's own rule beyond its type, by field name: `(check, expected)`, where
        `check(value)` is true for a good value and `expected` says what a good one is (the
        shared ones: `POSITIVE_INT`, `POSITIVE`, `NON_NEGATIVE`, `UNIT`, `HIDDEN`, `NUM_ENVS`,
        `ENV_DOOR`, ...). Default: none."""
        return {}

    @classmethod
    def env_defaults(cls, env_id: str) -> dict[str, Any]:
        """The shipped defaults of `env_id` (with or without the `metagraph/` prefix, or an
        alias) from `defaults_file`: its `[defaults."<id>"]` table over its group's table
        (`[groups.<name>]`, named by the id's `group` key), or {} for an environment without
        one (or a class without a `defaults_file`): the dataclass's own defaults then hold. A
        game without a table of its own (a user's: its task declares `num_players()`) takes
        the `[groups.games]` table where the file has one, as the built-in games do; an id of a
        family registered with a `family` name (every Atari game: "atari") takes that group's
        table."""
        if cls.defaults_file is None:
            return {}
        tables = tomllib.loads(cls.defaults_file.read_text())
        try:
            key = canonical_id(env_id)  # an alias (gymnax's "Breakout-MinAtar") is its id
        except ValueError:  # not registered (yet): its own name
            key = env_id.removeprefix("metagraph/")
        own = dict(tables.get("defaults", {}).get(key, {}))
        groups = tables.get("groups", {})
        if key not in tables.get("defaults", {}):
            family = family_of(key)
            if "games" in groups and num_players(key) >= 2:
                own = {"group": "games"}
            elif family in groups:  # (an Atari game: the [groups.atari] table)
                own = {"group": family}
        group = own.pop("group", None)
        if group is not None and group not in tables.get("groups", {}):
            raise ValueError(f"{cls.defaults_file}: {env_id} names an unknown group {group!r}")
        return {**(tables["groups"][group] if group is not None else {}), **own}

    @classmethod
    def for_env(cls, env_id: str, values: dict[str, Any] | None = None) -> Any:
        """The config for `env_id`: its shipped defaults (`env_defaults`), overridden by
        `values` (a user's `--config` / `--set`), checked like `from_dict`. The
        environment's keyword arguments (`env_kwargs`) merge: a user's over the shipped ones."""
        shipped, values = cls.env_defaults(env_id), new_names(cls, dict(values or {}))
        if isinstance(shipped.get("env_kwargs"), dict) and isinstance(values.get("env_kwargs"),
                                                                      dict):
            values["env_kwargs"] = {**shipped["env_kwargs"], **values["env_kwargs"]}
        return cls.from_dict({**shipped, **values})

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Any:
        """The config of `values` (see `from_dict`)."""
        return from_dict(cls, values)

    def to_dict(self) -> dict[str, Any]:
        """The config as a dict of its fields."""
        return dataclasses.asdict(self)
