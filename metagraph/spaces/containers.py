"""Dict, Tuple and Record: spaces whose values are dicts, tuples or NamedTuples of other
spaces' values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from metagraph.spaces.dims import BATCH, TIME
from metagraph.spaces.space import Space, generator


class Container(Space):
    """Shared behaviour: everything is done child by child. Rank flags given to a container
    are applied to every child (`Dict({...}, batch=True)` batches all of them)."""

    def _children(self) -> Iterable[tuple[Any, Space]]:
        raise NotImplementedError

    def _rebuild(self, children: list[Space]) -> Container:
        raise NotImplementedError

    def _pack(self, values: list[Any]) -> Any:
        raise NotImplementedError

    def _map(self, fn) -> Any:
        return self._pack([fn(space) for _, space in self._children()])

    @property
    def batch(self) -> bool:  # type: ignore[override]
        """True if any child has a batch rank."""
        return any(s.batch for _, s in self._children())

    @property
    def time(self) -> bool:  # type: ignore[override]
        """True if any child has a time rank."""
        return any(s.time for _, s in self._children())

    def with_ranks(self, batch=None, time=None, time_major=None) -> Container:
        """A copy with the rank flags changed on every child (`None` keeps one)."""
        return self._rebuild([s.with_ranks(batch, time, time_major) for _, s in self._children()])

    def to_abstract(self, batch_size: Any = BATCH, time_size: Any = TIME) -> Any:
        """The children's `jax.ShapeDtypeStruct`s, in this container's structure."""
        return self._map(lambda s: s.to_abstract(batch_size, time_size))

    def zeros(self, batch_size: int = 1, time_size: int = 1) -> Any:
        """The children's zero values, in this container's structure."""
        return self._map(lambda s: s.zeros(batch_size, time_size))

    def sample(self, seed=None, batch_size: int = 1, time_size: int = 1) -> Any:
        """Random values of the children (one generator shared, so one seed draws all), in
        this container's structure."""
        rng = generator(seed)
        return self._map(lambda s: s.sample(rng, batch_size, time_size))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and list(self._children()) == list(other._children())

    def __hash__(self) -> int:
        return hash(tuple(self._children()))


def _checked(space: Any, owner: str) -> Space:
    if isinstance(space, Mapping):
        return Dict(space)
    if isinstance(space, tuple):
        return Tuple(space)
    if not isinstance(space, Space):
        raise TypeError(f"{owner}: every entry must be a Space, got {type(space).__name__}")
    return space


def _ranked(spaces: dict[str, Space], batch: bool, time: bool, time_major: bool
            ) -> dict[str, Space]:
    """`spaces` with the rank flags given to their container applied to each."""
    if not (batch or time or time_major):
        return spaces
    return {k: v.with_ranks(batch or None, time or None, time_major or None)
            for k, v in spaces.items()}


class Dict(Container):
    """A dict of spaces; values are dicts with exactly these keys (nested dicts allowed)."""

    def __init__(self, spaces: Mapping[str, Any] | None = None, batch: bool = False,
                 time: bool = False, time_major: bool = False, **kwargs: Any):
        items = dict(spaces or {}, **kwargs)
        if not all(isinstance(k, str) for k in items):
            raise TypeError("Dict: keys must be strings")
        self.spaces = _ranked({k: _checked(v, f"Dict[{k!r}]") for k, v in sorted(items.items())},
                              batch, time, time_major)

    def _children(self):
        return self.spaces.items()

    def _rebuild(self, children):
        return Dict(dict(zip(self.spaces, children, strict=True)))

    def _pack(self, values):
        return dict(zip(self.spaces, values, strict=True))

    def __getitem__(self, key: str) -> Space:
        return self.spaces[key]

    def keys(self):
        """The keys, sorted."""
        return self.spaces.keys()

    def contains(self, value: Any) -> bool:
        """True if `value` is a mapping with exactly these keys and every child contains its
        entry."""
        return (isinstance(value, Mapping) and set(value) == set(self.spaces)
                and all(s.contains(value[k]) for k, s in self.spaces.items()))

    def __str__(self) -> str:
        return "Dict(" + ", ".join(f"{k}={v}" for k, v in self.spaces.items()) + ")"

    def __repr__(self) -> str:
        return "Dict(" + ", ".join(f"{k}={v!r}" for k, v in self.spaces.items()) + ")"

    def short(self) -> str:
        """A compact label, as drawn on an edge: `{action, obs}`."""
        return "{" + ", ".join(self.spaces) + "}"


class Tuple(Container):
    """A tuple of spaces; values are tuples (or lists) of the same length."""

    def __init__(self, spaces: Iterable[Any] = (), batch: bool = False, time: bool = False,
                 time_major: bool = False):
        self.spaces = tuple(_checked(s, f"Tuple[{i}]") for i, s in enumerate(spaces))
        if batch or time or time_major:
            self.spaces = tuple(s.with_ranks(batch or None, time or None, time_major or None)
                                for s in self.spaces)

    def _children(self):
        return enumerate(self.spaces)

    def _rebuild(self, children):
        return Tuple(children)

    def _pack(self, values):
        return tuple(values)

    def __getitem__(self, index: int) -> Space:
        return self.spaces[index]

    def __len__(self) -> int:
        return len(self.spaces)

    def contains(self, value: Any) -> bool:
        """True if `value` is a tuple or list of this length and every child contains its entry."""
        return (isinstance(value, tuple | list) and len(value) == len(self.spaces)
                and all(s.contains(v) for s, v in zip(self.spaces, value, strict=True)))

    def __str__(self) -> str:
        return "Tuple(" + ", ".join(str(s) for s in self.spaces) + ")"

    def __repr__(self) -> str:
        return "Tuple(" + ", ".join(repr(s) for s in self.spaces) + ")"

    def short(self) -> str:
        """A compact label, as drawn on an edge: `(f32[B,4], i32[B])`."""
        return "(" + ", ".join(s.short() for s in self.spaces) + ")"


class Record(Container):
    """A NamedTuple type's values (`record_type`, such as `components.envs.StepResult`) whose
    fields have these spaces; a field given no space (or None) is None in every value (a
    record's optional part not asked for). Values are instances of `record_type`, so a record
    keeps its type and its field names through an API's outputs and a compiled call."""

    def __init__(self, record_type: type, spaces: Mapping[str, Any] | None = None,
                 batch: bool = False, time: bool = False, time_major: bool = False,
                 **kwargs: Any):
        fields = getattr(record_type, "_fields", None)
        if not isinstance(record_type, type) or not issubclass(record_type, tuple) \
                or fields is None:
            raise TypeError(f"Record: record_type must be a NamedTuple type, got "
                            f"{record_type!r}")
        items = {k: v for k, v in dict(spaces or {}, **kwargs).items() if v is not None}
        unknown = sorted(set(items) - set(fields))
        if unknown:
            raise TypeError(f"Record({record_type.__name__}): no fields {unknown}; its fields "
                            f"are {list(fields)}")
        self.record_type = record_type
        self.spaces = _ranked({k: _checked(items[k], f"Record[{k!r}]") for k in fields
                               if k in items}, batch, time, time_major)

    def _children(self):
        return self.spaces.items()

    def _rebuild(self, children):
        return Record(self.record_type, dict(zip(self.spaces, children, strict=True)))

    def _pack(self, values):
        given = dict(zip(self.spaces, values, strict=True))
        return self.record_type(**{k: given.get(k) for k in self.record_type._fields})

    def __getitem__(self, key: str) -> Space:
        return self.spaces[key]

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and self.record_type is other.record_type  # type: ignore

    def __hash__(self) -> int:
        return hash((self.record_type, tuple(self._children())))

    def contains(self, value: Any) -> bool:
        """True if `value` is a `record_type` whose fields with a space contain their entries
        and whose other fields are None."""
        return (isinstance(value, self.record_type)
                and all(s.contains(getattr(value, k)) for k, s in self.spaces.items())
                and all(getattr(value, k) is None for k in self.record_type._fields
                        if k not in self.spaces))

    def __str__(self) -> str:
        return (f"{self.record_type.__name__}("
                + ", ".join(f"{k}={v}" for k, v in self.spaces.items()) + ")")

    def __repr__(self) -> str:
        return (f"Record({self.record_type.__name__}, "
                + ", ".join(f"{k}={v!r}" for k, v in self.spaces.items()) + ")")

    def short(self) -> str:
        """A compact label, as drawn on an edge: `StepResult{obs, reward}`."""
        return self.record_type.__name__ + "{" + ", ".join(self.spaces) + "}"


__all__ = ["Container", "Dict", "Record", "Tuple"]
