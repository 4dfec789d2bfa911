"""`@api`: marks a component method as an API, a node of the meta-graph.

An API call is where the library looks: while a graph is built, each call records a node and
an edge carrying the spaces that flowed and the declared spaces are checked; an error raised
inside names this component and API (`metagraph.api_errors`: JAX's shape errors become a
`SpaceError`, Python that cannot run on traced values a `TraceError`, the user's own
exceptions keep their type and get a note).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from metagraph import api_errors, context
from metagraph.errors import MetaGraphError, SpaceError
from metagraph.spaces import Space

SpaceSpec = Space | Callable[[Any], Space]


@dataclasses.dataclass(frozen=True)
class ApiSpec:
    """What `@api` knows about a method: its signature and the spaces it declares.

    A declared space is a `Space` or a function of the component returning one (for spaces
    that depend on constructor arguments: `inputs={"obs": lambda self: self.obs_space}`).
    """

    name: str
    fn: Callable
    signature: inspect.Signature
    inputs: Mapping[str, SpaceSpec]
    outputs: SpaceSpec | None
    polymorphic: bool
    on_request: bool = False

    @property
    def params(self) -> list[inspect.Parameter]:
        """The method's parameters without `self`."""
        return list(self.signature.parameters.values())[1:]  # without self

    def declared_input(self, component: Any, argument: str) -> Space | None:
        """The space declared for `argument` (a declaring function resolved on `component`),
        or None."""
        return _resolve(self.inputs.get(argument), component)

    def declared_output(self, component: Any) -> Space | None:
        """The declared output space (a declaring function resolved on `component`), or None."""
        return _resolve(self.outputs, component)


def _resolve(spec: SpaceSpec | None, component: Any) -> Space | None:
    if spec is None or isinstance(spec, Space):
        return spec
    return spec(component)


def api(fn: Callable | None = None, *, inputs: Mapping[str, SpaceSpec] | None = None,
        outputs: SpaceSpec | None = None, polymorphic: bool = False,
        on_request: bool = False) -> Any:
    """Mark a method as an API.

    `inputs` maps argument names to the spaces they must have, `outputs` the space of the
    result; both are checked when the graph is built. `polymorphic=True` lets a shared
    component's API see different spaces from different callers. `on_request=True` makes a
    root API that `mg.build` builds only when its `apis=` names it (one that only some uses
    of the component need, with inputs of their own: a distributed form's `learn`).
    """

    def decorate(method: Callable) -> Callable:
        signature = inspect.signature(method)
        unknown = set(inputs or {}) - set(list(signature.parameters)[1:])
        if unknown:
            raise TypeError(f"@api on {method.__qualname__}: inputs declared for unknown "
                            f"arguments {sorted(unknown)}")
        spec = ApiSpec(method.__name__, method, signature, dict(inputs or {}), outputs,
                       polymorphic, on_request)

        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            return call(self, spec, args, kwargs)

        wrapper.__metagraph_api__ = spec
        return wrapper

    return decorate(fn) if fn is not None else decorate


def api_specs(component_type: type) -> dict[str, ApiSpec]:
    """Every API of a component class, in definition order (base classes first)."""
    specs: dict[str, ApiSpec] = {}
    for klass in reversed(component_type.__mro__):
        for attr, value in vars(klass).items():
            spec = getattr(value, "__metagraph_api__", None)
            if spec is not None:
                specs[attr] = spec
            elif attr in specs:  # overridden by a non-API
                del specs[attr]
    return specs


def call(component: Any, spec: ApiSpec, args: tuple, kwargs: dict) -> Any:
    """Run API `spec` of `component` inside the active frame: bind the arguments, record the
    call (while a graph is built), run it under the frame's call stack, and name this
    component and API in any error it raises (see `metagraph.api_errors`)."""
    frame = context.current()
    if frame is None:
        raise MetaGraphError(
            f"{type(component).__name__}.{spec.name}() was called outside a graph: build it "
            f"with mg.build(root, input_spaces) and call it through a backend, e.g. "
            f"backends.xla.lower(graph).{spec.name}(...)")
    path = frame.scopes.of(component)
    try:
        bound = spec.signature.bind(component, *args, **kwargs)
    except TypeError as e:
        params = ", ".join(p.name for p in spec.params)
        raise SpaceError(f"{path}.{spec.name}({params}): {e}", component=path,
                         api=spec.name) from None
    bound.apply_defaults()
    arguments = dict(list(bound.arguments.items())[1:])
    recorder = frame.recorder
    node = f"{path}.{spec.name}"
    caller = frame.stack[-1] if frame.stack else None
    if recorder is not None:
        recorder.enter(path, component, spec, arguments, caller=caller)
    frame.stack.append(node)
    before = api_errors.attributes(component)
    try:
        result = spec.fn(component, *args, **kwargs)
    except MetaGraphError:
        raise
    except Exception as error:
        translated = api_errors.translate(error, path, spec.name, caller)
        if translated is None:
            raise
        raise translated from error
    finally:
        frame.stack.pop()
    api_errors.check_kept_arrays(component, before, path, spec.name)
    if recorder is not None:
        recorder.exit(path, component, spec, result)
    return result
