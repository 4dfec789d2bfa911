"""`mg.build`: one abstract trace of every root API records and checks the meta-graph (and,
when no input has a symbolic dimension, is the program `init_state` compiles)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jax
import numpy as np

from metagraph import context
from metagraph.api import api_specs
from metagraph.checks import positive_int
from metagraph.component import Component
from metagraph.errors import MetaGraphError, SpaceError
from metagraph.graph import ApiSignature, MetaGraph
from metagraph.recorder import INPUT, Recorder
from metagraph.schema import ApiNode, ComponentNode
from metagraph.scopes import Scopes
from metagraph.spaces import BATCH, TIME, Dict, Space, Tuple


def build(root: Component, input_spaces: Mapping[str, Any], *, apis: Iterable[str] | None = None,
          batch_size: int | None = None, time_size: int | None = None) -> MetaGraph:
    """Trace every root API once on abstract values and return the checked `MetaGraph`.

    `input_spaces` maps each root API argument name to its space (shared by name across
    APIs, as in RLgraph). `apis` limits the root APIs built (default: all but those marked
    `@api(on_request=True)`, which are built only when named). The batch and time
    dimensions are symbolic (`B`, `T`) unless `batch_size` / `time_size` fix them. No XLA
    compilation happens here.
    """
    if not isinstance(root, Component):
        raise TypeError(f"mg.build: root must be a Component, got {type(root).__name__}")
    batch_size = None if batch_size is None else positive_int(batch_size, "mg.build: batch_size")
    time_size = None if time_size is None else positive_int(time_size, "mg.build: time_size")
    scopes = Scopes(root)
    spaces = {name: _as_space(name, space) for name, space in input_spaces.items()}
    specs = api_specs(type(root))
    wanted = ([name for name, spec in specs.items() if not spec.on_request] if apis is None
              else list(apis))
    for name in wanted:
        if name not in specs:
            raise MetaGraphError(f"mg.build: {root.name} has no API {name!r}; its APIs are "
                                 f"{sorted(specs)}")
    if not wanted:
        raise MetaGraphError(f"mg.build: {root.name} ({type(root).__name__}) has no @api method")
    batch = BATCH if batch_size is None else batch_size
    time = TIME if time_size is None else time_size
    recorder = Recorder(scopes.components, batch, time)

    signatures = {}
    for name in wanted:
        params = {}
        for param in specs[name].params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise SpaceError(f"{root.name}.{name}: a root API cannot take *args/**kwargs",
                                 component=root.name, api=name, caller=INPUT)
            if param.name in spaces:
                params[param.name] = spaces[param.name]
            elif param.default is param.empty:
                raise recorder.missing_input(specs[name], root.name, params, param.name)
        signatures[name] = ApiSignature(name, params)

    trainable: dict[tuple[str, str], bool] = {}

    def trace(key, inputs):
        frame = context.Frame(context.INIT, scopes, key=key, recorder=recorder)
        with context.active(frame):
            for name in wanted:  # the outputs are recorded; the program returns the state
                getattr(root, name)(**inputs[name])
        trainable.update(frame.trainable)
        return frame.state

    abstract_inputs = {name: {arg: space.to_abstract(batch, time)
                              for arg, space in sig.inputs.items()}
                       for name, sig in signatures.items()}
    key = jax.ShapeDtypeStruct((2,), np.uint32)
    try:
        traced = jax.jit(trace).trace(key, abstract_inputs)
    except SpaceError as error:
        if error.graph is None:
            error.graph = recorder.nx
        raise error.with_traceback(None) from error.__cause__
    for name, sig in signatures.items():
        sig.outputs = ApiNode(recorder.nx.nodes[f"{root.name}.{name}"]).outputs
    state_spec = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype),
                              traced.out_info)
    _check_static_state(state_spec)
    # with no symbolic dimension in the inputs this trace is the init program init_state runs
    concrete = all(isinstance(d, int) for leaf in jax.tree.leaves(abstract_inputs)
                   for d in leaf.shape)
    graph = MetaGraph(root, recorder.nx, scopes, signatures, state_spec,
                      {k for k, v in trainable.items() if v}, batch_size, time_size,
                      init_trace=traced if concrete else None)
    for path, component in scopes.components.items():
        ComponentNode(recorder.nx.nodes[path]).params = graph.param_count(path, recursive=False)
        component.__dict__["_mg_last_scope"] = path  # `component.scope` outside any graph
    return graph


def _as_space(name: str, space: Any) -> Space:
    if isinstance(space, Space):
        return space
    if isinstance(space, Mapping):
        return Dict(space)
    if isinstance(space, tuple):
        return Tuple(space)
    raise SpaceError(f"mg.build: input space {name!r} must be a Space, got "
                     f"{type(space).__name__}", argument=name, caller=INPUT)


def _check_static_state(state_spec: dict) -> None:
    for scope, variables in state_spec.items():
        for name, value in variables.items():
            for leaf in jax.tree.leaves(value):
                if not all(isinstance(d, int) for d in leaf.shape):
                    raise SpaceError(
                        f"{scope}: state {name!r} has shape {tuple(leaf.shape)}, which depends "
                        f"on the batch or time dimension; state shapes must be fixed (pass the "
                        f"size to the component, or build with batch_size=...)",
                        component=scope, api="get_state", argument=name)
