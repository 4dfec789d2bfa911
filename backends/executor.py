"""The executor interface every backend shares: call root APIs by name, own the state.

    exe = backends.xla.lower(graph)         # or backends.eager.lower(graph)
    actions = exe.act(obs, key)              # == exe.call("act", obs, key)
    exe.get_state("agent/policy")            # NumPy copy of one component's state
    exe.get_state("agent/policy", recursive=True)   # ... and of the components inside it
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from backends.inputs import InputChecker
from metagraph import checkpoint, runtime_checks
from metagraph.component import Component
from metagraph.errors import MetaGraphError, SpaceError, StateError
from metagraph.graph import MetaGraph, State
from metagraph.spaces import abstract_of, same_signature, space_of


class Executor:
    """Holds a graph's state on the device and runs its root APIs.

    Each root API is also an attribute, `exe.act(...)`, bound once (no lookup per call), so a
    root API cannot be named like an attribute or method of the executor: those names
    (`reserved_names()`: `state`, `graph`, `call`, `get_state`, ... and a backend's own) are
    refused when the graph is lowered. Subclasses implement `_run(api, state, inputs) ->
    (state', outputs)` and declare their instance attributes as class annotations.
    """

    graph: MetaGraph
    state: State
    _lost: str | None
    seeds: int | None = None  # K when K seeds run at once (a leading axis everywhere)

    def __init__(self, graph: MetaGraph, seed: int = 0, state: State | None = None):
        self._check_api_names(graph)
        self.graph = graph
        self._lost = None
        self._checkers = {name: InputChecker(graph.root.name, sig)
                          for name, sig in graph.apis.items()}
        self.state = self._initial_state(seed)
        if state is not None:
            self.set_state(state)
        for name in graph.apis:  # exe.act(...) without a lookup through __getattr__ per call
            self.__dict__[name] = self._bound(name)

    @classmethod
    def reserved_names(cls) -> set[str]:
        """The names a root API cannot have with this executor: its methods, properties and
        (annotated) instance attributes (and any name starting with '_')."""
        names = set(dir(cls))
        for klass in cls.__mro__:
            names.update(vars(klass).get("__annotations__", {}))
        return names

    def _check_api_names(self, graph: MetaGraph) -> None:
        reserved = self.reserved_names()
        clashes = [name for name in graph.apis if name in reserved or name.startswith("_")]
        if clashes:
            public = sorted(n for n in reserved if not n.startswith("_"))
            raise MetaGraphError(
                f"{graph.root.name} ({type(graph.root).__name__}): root API {clashes[0]!r} "
                f"has the name of an attribute of {type(self).__name__} (exe.{clashes[0]}), "
                f"which it would replace; rename the API. Names a root API cannot have: "
                f"{public} and names starting with '_'")

    def _initial_state(self, seed: int) -> State:
        return self.graph.init_state(seed)

    # ---- calling -----------------------------------------------------------------------------
    def call(self, api: str, *args: Any, **kwargs: Any) -> Any:
        """Call root API `api` with the given inputs and keep the new state.

        Args:
            api: The root API's name.
            *args: Its inputs, positionally.
            **kwargs: Its inputs, by name.

        Returns:
            The API's outputs.

        Raises:
            AttributeError: The graph has no built API `api`.
            SpaceError: An input does not fit its space.
            RuntimeCheckError: A `require` inside the executable failed.
        """
        checker = self._checkers.get(api)
        if checker is None:
            raise AttributeError(f"{self.graph.root.name} has no built API {api!r}; built: "
                                 f"{list(self.graph.apis)}")
        return self.__dict__[api](*args, **kwargs)

    def _bound(self, name: str):
        checker = self._checkers[name]

        def bound(*args: Any, **kwargs: Any) -> Any:
            inputs, key = checker(args, kwargs)
            try:
                self.state, outputs = self._run(name, self.state, inputs, key)
            except Exception as error:
                self._failed(name, error)
                raise
            runtime_checks.raise_pending()
            return outputs

        bound.__name__ = name
        bound.__doc__ = f"Run root API {self.graph.apis[name]}"
        return bound

    def _failed(self, api: str, error: Exception) -> None:
        """After call `api` raised `error`: if the state it was given is gone (donated to a
        call that failed inside XLA), say so on the error and in `state_lost`."""
        runtime_checks.discard_pending()  # reports of a failed call are not the next one's
        if self._lost is None and any(getattr(leaf, "is_deleted", lambda: False)()
                                      for leaf in jax.tree.leaves(self.state)):
            self._lost = (f"the state was donated to the call of {api!r} that failed "
                          f"({type(error).__name__}) and is lost; replace it with "
                          f"load_checkpoint(...) or set_state(...)")
            error.add_note(f"{self.graph.root.name}: {self._lost}")

    @property
    def state_lost(self) -> str | None:
        """Why the state is gone (a call it was donated to failed inside XLA), or None. Until
        it is replaced (`set_state`, `load_checkpoint`), `get_state` and `save_checkpoint`
        raise StateError with this."""
        return self._lost

    def _check_alive(self) -> None:
        if self.state_lost is not None:
            raise StateError(f"{self.graph.root.name}: {self.state_lost}")

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"{type(self).__name__} has no attribute or API {name!r}")

    def _run(self, api: str, state: State, inputs: tuple, key: tuple) -> tuple[State, Any]:
        """Run root API `api`; `key` is the inputs' signature (shapes and dtypes)."""
        raise NotImplementedError

    # ---- state -------------------------------------------------------------------------------
    def get_state(self, path: str | None = None, recursive: bool = False) -> Any:
        """A NumPy copy of the whole state (`{scope: {name: value}}`) or of one component's
        own entries (`{name: value}`); `path` is a scope path or a component of the graph.
        With `recursive=True`, the state of the component and of every component inside it
        (its subtree), `{scope: {name: value}}`, as `get_states(path)`: e.g.
        `exe.get_state("ppo_agent/policy", recursive=True)` holds the policy's torso and
        heads, whose own entries `get_state("ppo_agent/policy")` does not include."""
        if recursive and path is not None:
            return self.get_states(path)
        self._check_alive()
        scope = self._scope(path)
        tree = self.state if scope is None else self.state[scope]
        return jax.tree.map(np.array, tree)

    def set_state(self, value: Any, path: str | None = None) -> None:
        """Replace the whole state or one component's; shapes and dtypes must not change."""
        scope = self._scope(path)
        current = self.state if scope is None else self.state[scope]
        if not same_signature(abstract_of(current), abstract_of(value)):
            where = scope or self.graph.root.name
            raise SpaceError(f"{where}.set_state: expected {space_of(abstract_of(current))}, "
                             f"got {space_of(value)}", component=where, api="set_state",
                             expected=space_of(abstract_of(current)), actual=space_of(value))
        for part, entries in (value.items() if scope is None else [(scope, value)]):
            self._check_component_state(part, entries)
        value = jax.tree.map(lambda old, new: jax.numpy.asarray(new, old.dtype), current, value)
        if scope is None:
            self.state, self._lost = value, None
        else:
            self.state = {**self.state, scope: value}

    def _check_component_state(self, scope: str, entries: dict[str, Any]) -> None:
        """The component's own check of state set from outside a call
        (`Component.check_state`), its ValueError as a SpaceError naming it."""
        component = self.graph.components.get(scope)
        if component is None or type(component).check_state is Component.check_state:
            return  # takes any value of the right shapes: nothing to convert
        try:
            component.check_state(jax.tree.map(np.asarray, dict(entries)))
        except ValueError as error:
            raise SpaceError(f"{scope}.set_state: {error}", component=scope,
                             api="set_state") from None

    def get_states(self, path: Any) -> dict[str, Any]:
        """NumPy copies of the state of component `path` (a scope path or a component of the
        graph) and of every component inside it, `{scope: {name: value}}`: e.g. a policy's
        parameters, to send to another process."""
        self._check_alive()
        scope = path if isinstance(path, str) else self.graph.scope_of(path)
        found = {s: jax.tree.map(np.array, v) for s, v in self.state.items()
                 if s == scope or s.startswith(f"{scope}/")}
        if not found:
            raise StateError(f"no state in or below component {path!r}; components with "
                             f"state: {list(self.state)}")
        return found

    def set_states(self, states: dict[str, Any]) -> None:
        """Replace the state of several components (`get_states`' result, maybe from another
        executor of the same graph); shapes and dtypes must not change."""
        for scope, value in states.items():
            self.set_state(value, scope)

    def save_checkpoint(self, path: Any, meta: dict[str, Any] | None = None) -> Any:
        """Write the whole state atomically (see `metagraph.checkpoint`)."""
        self._check_alive()
        return checkpoint.save(path, self.state, meta)

    def load_checkpoint(self, path: Any, upgrade: Any = None) -> dict[str, Any]:
        """Replace the state with a checkpoint's (checked against this graph; an earlier
        version's brought to it by `upgrade`, see `metagraph.checkpoint.load`); returns its
        meta."""
        state, meta = checkpoint.load(path, like=self.state, upgrade=upgrade)
        self.set_state(state)
        return meta

    def _scope(self, path: Any) -> str | None:
        if path is None:
            return None
        scope = path if isinstance(path, str) else self.graph.scope_of(path)
        if scope not in self.graph.components:
            raise StateError(f"no component {path!r} in the graph; components: "
                             f"{list(self.graph.components)}")
        if scope not in self.state:
            raise StateError(f"component {scope!r} has no state")
        return scope
