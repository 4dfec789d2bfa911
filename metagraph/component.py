"""Component: the unit of composition. Sub-components are attributes; APIs are `@api` methods.

A component owns its state (parameters, optimizer state, buffers, counters). State is created
inside an API, on first use, from an initialiser that can look at the shapes that flowed in,
and read and written with `get_state` / `get_param` / `set_state`. Underneath, the state is
threaded functionally through the lowered function (see `metagraph.context`).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jax
import jax.numpy as jnp

from metagraph import context
from metagraph.errors import MetaGraphError, SpaceError, StateError
from metagraph.spaces import abstract_of, same_signature, space_of

Initializer = Callable[[jax.Array], Any] | Any


def _snake(name: str) -> str:
    """PPOAgent -> ppo_agent, MLP -> mlp, RunningMean -> running_mean."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


class Component:
    """Base class of every component.

    Subclasses need no `super().__init__()` call; pass `name=` to `Component.__init__` (or set
    `self.name`) to choose the scope name, which defaults to the class name in snake case.
    """

    def __init__(self, name: str | None = None):
        if name is not None:
            self.name = name

    # ---- identity ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The scope name: `name=` given to the constructor, else the snake-cased class name."""
        return self.__dict__.get("_mg_name") or _snake(type(self).__name__)

    @name.setter
    def name(self, value: str) -> None:
        if not isinstance(value, str) or not value or "/" in value or "." in value:
            raise ValueError(f"component name must be a non-empty string without '/' or '.', "
                             f"got {value!r}")
        self.__dict__["_mg_name"] = value

    @property
    def scope(self) -> str:
        """The path of this component, e.g. `agent/policy`.

        Inside an API it is the path in the graph running now. Outside, it is the path in the
        graph this component was most recently built into: a component can be part of several
        graphs (alone in a `ComponentTest`, inside two agents), so code that holds a graph
        should ask it, `graph.scope_of(component)`, which is never ambiguous."""
        frame = context.current()
        if frame is not None:
            return frame.scopes.of(self)
        scope = self.__dict__.get("_mg_last_scope")
        if scope is None:
            raise MetaGraphError(
                f"{type(self).__name__} '{self.name}' is not part of a built graph: attach it "
                f"as an attribute of the root component and call mg.build(root, ...)")
        return scope

    @property
    def initializing(self) -> bool:
        """True while the graph's state is being created (`mg.build`, `init_state`): the APIs
        then run on placeholder inputs, so host side effects (callbacks into an environment
        pool, input checks) should be skipped."""
        return context.initializing()

    def link(self, name: str, component: Component) -> None:
        """Make `self.<name>` refer to a component owned elsewhere in the graph (an optimizer's
        target, a loss's policy). A link is used like an attribute but is not a sub-component:
        the component keeps the scope of its owner."""
        if not isinstance(component, Component):
            raise TypeError(f"{type(self).__name__}.link({name!r}): expected a Component, got "
                            f"{type(component).__name__}")
        self.__dict__.setdefault("_mg_links", {})[name] = component

    def __getattr__(self, name: str) -> Any:
        links = self.__dict__.get("_mg_links", {})
        if name in links:
            return links[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def sub_components(self) -> Iterator[tuple[str, Component]]:
        """(name, component) for every direct sub-component: attributes holding a component,
        or lists, tuples and dicts of components (named `attr_0`, `attr_key`)."""
        for attr, value in vars(self).items():
            if attr.startswith("_mg_"):
                continue
            if isinstance(value, Component):
                yield attr, value
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, Component):
                        yield f"{attr}_{i}", item
            elif isinstance(value, Mapping):
                for k, item in value.items():
                    if isinstance(item, Component):
                        yield f"{attr}_{k}", item

    # ---- state -------------------------------------------------------------------------------
    def get_param(self, name: str, init: Initializer) -> Any:
        """Read trainable state `name`, creating it from `init(key)` (or the value `init`) on
        first use. Parameters are what an optimizer differentiates and what counts as size."""
        return self._variable(name, init, trainable=True)

    def get_state(self, name: str, init: Initializer) -> Any:
        """Read non-trainable state `name` (counters, buffers, optimizer moments), creating it
        from `init(key)` (or the value `init`) on first use."""
        return self._variable(name, init, trainable=False)

    def check_state(self, state: dict[str, Any]) -> None:
        """Refuse state set from outside a call. Executors call it with this component's own
        entries `{name: value}` (NumPy arrays, with a leading axis per seed under `seeds=K`)
        before they take them from outside a call (`set_state`, `set_states`,
        `load_checkpoint`): raise ValueError saying what is wrong (an entry no API could have
        written: a checkpoint edited by hand, a forged environment state); the executor's
        state is unchanged then. By default any value of the right shapes and dtypes is
        taken."""

    def set_state(self, name: str, value: Any) -> None:
        """Replace state `name`; the new value must have the same structure, shapes and dtypes."""
        frame = self._frame("set_state")
        scope = frame.scopes.of(self)
        old = frame.state.get(scope, {}).get(name)
        if old is None:
            known = sorted(frame.state.get(scope, {}))
            raise StateError(f"{scope}.set_state({name!r}): no such state; create it first "
                             f"with get_state/get_param (it has {known})")
        value = jax.tree.map(jnp.asarray, value)
        if not same_signature(abstract_of(old), abstract_of(value)):
            raise SpaceError(f"{scope}.set_state({name!r}): expected {space_of(old)}, got "
                             f"{space_of(value)}; state keeps its shape and dtype",
                             component=scope, api="set_state", argument=name,
                             expected=space_of(old), actual=space_of(value))
        if frame.mode == context.APPLY:
            frame.state[scope][name] = value

    def _variable(self, name: str, init: Initializer, trainable: bool) -> Any:
        frame = self._frame("get_state")
        scope = frame.scopes.of(self)
        existing = frame.state.get(scope, {})
        if name in existing:
            return existing[name]
        if frame.mode != context.INIT:
            raise StateError(
                f"{scope}: state {name!r} does not exist; state must be created in every build "
                f"(an API that creates state only on some Python branch cannot be lowered)")
        key = jax.random.fold_in(frame.key, zlib.crc32(f"{scope}/{name}".encode()))
        value = init(key) if callable(init) else init
        value = jax.tree.map(jnp.asarray, value)
        frame.state.setdefault(scope, {})[name] = value
        frame.trainable[(scope, name)] = trainable
        return value

    def _frame(self, what: str) -> context.Frame:
        frame = context.current()
        if frame is None:
            raise MetaGraphError(
                f"{type(self).__name__}.{what} called outside a graph: state exists only while "
                f"an API runs inside mg.build or a backend executor")
        return frame

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
