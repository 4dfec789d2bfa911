"""`renamed_fields`: a config dataclass that still reads the old names of renamed fields for
one release (from Python, `--set`, `--config` and old run directories' config.json), each use
with a DeprecationWarning that names the new one."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any


def renamed_fields(renamed: dict[str, str]) -> Callable[[type], type]:
    """A class decorator over `@dataclasses.dataclass` for `{old name: new name}`: the
    constructor takes the old keyword, the old attribute reads the new field, and
    `AgentConfig.from_dict` takes the old key, each with a DeprecationWarning::

        @renamed_fields({"num_paths": "num_envs"})
        @dataclasses.dataclass(frozen=True)
        class ReweightConfig(AgentSettings): ...
    """
    def decorate(cls: type) -> type:
        made = cls.__init__

        @functools.wraps(made)
        def __init__(self, *args: Any, **values: Any) -> None:
            made(self, *args, **new_names(cls, values))

        cls.__init__ = __init__
        cls.renamed = {**getattr(cls, "renamed", {}), **renamed}
        for old, new in renamed.items():
            setattr(cls, old, _old_attribute(cls.__name__, old, new))
        return cls
    return decorate


def new_names(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """`values` (a config's keys) with each old name of `cls.renamed` replaced by its new
    one, with a DeprecationWarning.

    Raises:
        ValueError: both the old name and the new one are given.
    """
    renamed = getattr(cls, "renamed", {})
    if not renamed.keys() & values.keys():
        return values
    values = dict(values)
    for old, new in renamed.items():
        if old not in values:
            continue
        if new in values:
            raise ValueError(f"{cls.__name__}: {old!r} is the old name of {new!r}; give "
                             f"{new!r} alone (also to dataclasses.replace), got both")
        warnings.warn(f"{cls.__name__}: {old!r} is now {new!r} (the old name is read until "
                      f"the next release)", DeprecationWarning, stacklevel=3)
        values[new] = values.pop(old)
    return values


def _old_attribute(owner: str, old: str, new: str) -> property:
    def read(self: Any) -> Any:
        warnings.warn(f"{owner}.{old} is now {owner}.{new}", DeprecationWarning, stacklevel=2)
        return getattr(self, new)
    return property(read, doc=f"Deprecated: `{new}`.")
