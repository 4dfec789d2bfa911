"""Checking the inputs of a root API call against the graph's input spaces.

A call's signature (shapes and dtypes of its arrays) is fully validated the first time it is
seen; later calls with the same signature skip straight to the executable. Nothing is silently
broadcast or cast: a float64 array for a float32 space, a wrong shape, a missing or extra
argument each raise `SpaceError` naming the root, the API and the argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from metagraph.errors import SpaceError
from metagraph.graph import ApiSignature
from metagraph.recorder import INPUT
from metagraph.spaces import ArraySpace, Container, Space, abstract_of, same_signature, space_of


class InputChecker:
    """Binds and checks one root API's inputs: fully on a new input signature, by a cache lookup
    otherwise."""
    def __init__(self, root_name: str, signature: ApiSignature):
        self.root, self.sig = root_name, signature
        self.names = list(signature.inputs)
        self._seen: set[tuple] = set()

    def __call__(self, args: tuple, kwargs: Mapping[str, Any]) -> tuple[tuple, tuple]:
        """Returns the inputs in call order and their signature (the executable cache key)."""
        if not kwargs and len(args) == len(self.names):
            try:
                key = tuple((x.shape, x.dtype) for x in jax.tree.leaves(args))
            except AttributeError:  # a Python scalar somewhere: take the slow path
                key = None
            if key in self._seen:
                return args, key
        inputs = self._bind(args, kwargs)
        inputs = tuple(_convert_scalars(v, s) for v, s in zip(inputs, self.sig.inputs.values(),
                                                             strict=True))
        self._validate(inputs)
        key = signature_key(inputs)
        self._seen.add(key)
        return inputs, key

    def _bind(self, args: tuple, kwargs: Mapping[str, Any]) -> tuple:
        where = f"{self.root}.{self.sig.name}({', '.join(self.names)})"
        if len(args) > len(self.names):
            raise SpaceError(f"{where}: takes {len(self.names)} inputs, got {len(args)}",
                             component=self.root, api=self.sig.name, caller=INPUT)
        values = dict(zip(self.names, args, strict=False))
        for name, value in kwargs.items():
            if name not in self.names:
                raise SpaceError(f"{where}: unexpected input {name!r}", component=self.root,
                                 api=self.sig.name, argument=name, caller=INPUT)
            if name in values:
                raise SpaceError(f"{where}: input {name!r} given twice", component=self.root,
                                 api=self.sig.name, argument=name, caller=INPUT)
            values[name] = value
        missing = [n for n in self.names if n not in values]
        if missing:
            raise SpaceError(f"{where}: missing inputs {missing}", component=self.root,
                             api=self.sig.name, argument=missing[0], caller=INPUT)
        return tuple(values[n] for n in self.names)

    def _validate(self, inputs: tuple) -> None:
        sizes: dict[str, tuple[int, str]] = {}
        for name, value, space in zip(self.names, inputs, self.sig.inputs.values(), strict=True):
            fail = self._mismatch_factory(name, value, space)
            try:
                abstract = abstract_of(value)
            except TypeError:
                raise fail() from None
            if jax.tree.structure(space.to_abstract(1, 1)) != jax.tree.structure(abstract):
                raise fail()
            for leaf_space, leaf in zip(_leaf_spaces(space), jax.tree.leaves(abstract),
                                        strict=True):
                self._collect_sizes(leaf_space, leaf.shape, name, sizes, fail)
            batch = sizes.get("B", (1,))[0]
            time = sizes.get("T", (1,))[0]
            if not same_signature(space.to_abstract(batch, time), abstract):
                raise fail(batch, time)

    def _collect_sizes(self, space: ArraySpace, shape: tuple, arg: str, sizes: dict,
                       fail) -> None:
        names = space.leading_names()
        if len(shape) < len(names):
            raise fail()
        for dim_name, size in zip(names, shape, strict=False):
            if dim_name in sizes and sizes[dim_name][0] != size:
                other_size, other_arg = sizes[dim_name]
                raise SpaceError(
                    f"{self.root}.{self.sig.name}({arg}): inputs disagree on the {dim_name} "
                    f"dimension: {other_arg} has {other_size}, {arg} has {size}",
                    component=self.root, api=self.sig.name, argument=arg, caller=INPUT)
            sizes.setdefault(dim_name, (size, arg))

    def _mismatch_factory(self, name: str, value: Any, space: Space):
        def fail(batch: Any = None, time: Any = None) -> SpaceError:
            try:
                actual: Any = space_of(value, batch, time)
            except TypeError:
                actual = f"a {type(value).__name__}"
            hint = ""
            if isinstance(value, list):
                hint = "pass an array (np.asarray(..., dtype)), not a list"
            elif isinstance(actual, Space) and "float64" in str(actual):
                hint = "cast with .astype(np.float32); nothing is cast silently"
            return SpaceError.mismatch(self.root, self.sig.name, name, space, actual,
                                       caller=INPUT, hint=hint)
        return fail


def signature_key(inputs: tuple) -> tuple:
    """The shapes and dtypes of every array in `inputs`: one compiled executable per key."""
    return tuple((x.shape, x.dtype) for x in jax.tree.leaves(inputs))


def _leaf_spaces(space: Space) -> list[ArraySpace]:
    if isinstance(space, Container):
        return [leaf for _, child in space._children() for leaf in _leaf_spaces(child)]
    return [space]


def _convert_scalars(value: Any, space: Space) -> Any:
    """A Python number for a scalar space becomes an array of that space's dtype."""
    if isinstance(value, bool | int | float) and isinstance(space, ArraySpace) \
            and not space.shape and not space.leading_dims():
        kinds = {bool: "b", int: "biuf", float: "f"}[type(value)]
        if space.dtype.kind in kinds:
            return np.asarray(value, space.dtype)
    return value
