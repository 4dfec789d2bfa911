"""`MetaGraph`: what `mg.build` returns. It is inspectable (summary, networkx graph, spaces,
state shapes) and turns each root API into a pure function for a backend to run."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import networkx as nx

from metagraph import context, schema
from metagraph.errors import StateError
from metagraph.schema import INPUT, CallEdge, ComponentNode, DataEdge
from metagraph.scopes import Scopes
from metagraph.spaces import Space, abstract_of, same_signature
from metagraph.state_info import StateEntry, bytes_text, state_entries

State = dict[str, dict[str, Any]]
# The init program runs once: compile it quickly rather than well. XLA:CPU's older elemental
# emitter in one LLVM module compiles it in about a third of the default's CPU time (0.3 s
# against 0.9 s for PPO's state); its slower loops cost microseconds here.
INIT_COMPILER_OPTIONS = {"xla_backend_optimization_level": 0,
                         "xla_llvm_disable_expensive_passes": True,
                         "xla_cpu_use_fusion_emitters": False,
                         "xla_cpu_parallel_codegen_split_count": 1}
_REJECTED_OPTIONS: set[str] = set()  # of INIT_COMPILER_OPTIONS, by this process's XLA


def compile_quickly(lowered: Any) -> Any:
    """`lowered.compile()` with INIT_COMPILER_OPTIONS, less those this JAX's XLA does not
    know (an option comes and goes between releases: `xla_cpu_use_fusion_emitters` is gone
    from jaxlib 0.11); any other error is raised as it is."""
    while True:
        options = {k: v for k, v in INIT_COMPILER_OPTIONS.items() if k not in _REJECTED_OPTIONS}
        try:
            return lowered.compile(compiler_options=options)
        except jax.errors.JaxRuntimeError as error:
            unknown = re.search(r"No such compile option: '(\w+)'", str(error))
            if unknown is None or unknown.group(1) not in options:
                raise
            _REJECTED_OPTIONS.add(unknown.group(1))


@dataclasses.dataclass
class ApiSignature:
    """A root API: its arguments' spaces (in call order) and the space of its result."""

    name: str
    inputs: dict[str, Space]
    outputs: Space | None = None

    def __str__(self) -> str:
        args = ", ".join(f"{k}: {v}" for k, v in self.inputs.items())
        return f"{self.name}({args}) -> {self.outputs}"


class MetaGraph:
    """A built, checked meta-graph.

    - `nx`: the networkx DiGraph; its nodes' and edges' attributes are the records of
      `metagraph.schema` (`schema.node(graph.nx, "agent.act")` reads one typed);
    - `apis`: root API name -> `ApiSignature`;
    - `components`: scope path -> component; `scope_of(component)` the other way. The paths
      belong to this graph: a component built into another graph too keeps its path here;
    - `state_spec`: `{scope: {name: ShapeDtypeStruct pytree}}` of all state; `state_table()`
      the same array by array (`StateEntry`: shape, dtype, trainable, bytes), also on each
      component node of `nx` as `state`;
    - `pure(api)`: the API as a pure function `(state, *inputs) -> (state', outputs)`;
    - `init_state(seed)`: concrete initial state.
    """

    def __init__(self, root: Any, graph: nx.DiGraph, scopes: Scopes,
                 apis: dict[str, ApiSignature], state_spec: State,
                 trainable: set[tuple[str, str]], batch_size: int | None,
                 time_size: int | None, init_trace: jax.stages.Traced | None = None):
        self.root = root
        self.nx = graph
        self.scopes = scopes
        self.components = scopes.components
        self.apis = apis
        self.state_spec = state_spec
        self.trainable = trainable
        self.batch_size, self.time_size = batch_size, time_size
        self._init_trace = init_trace  # mg.build's trace `(key, inputs) -> state`, if concrete
        self._state = state_entries(state_spec, trainable)
        for path in self.components:
            rows = self._state.get(path, [])
            component = ComponentNode(graph.nodes[path])
            component.state = rows
            component.state_bytes = sum(r.nbytes for r in rows)
            component.state_size = sum(r.size for r in rows)

    def scope_of(self, component: Any) -> str:
        """The path of `component` in this graph (MetaGraphError if it is not part of it)."""
        return self.scopes.of(component)

    # ---- running ---------------------------------------------------------------------------
    def pure(self, api: str) -> Callable[..., tuple[State, Any]]:
        """The root API `api` as a pure function `(state, *inputs) -> (state', outputs)`."""
        if api not in self.apis:
            raise KeyError(f"{self.root.name} has no built API {api!r}; built: {list(self.apis)}")
        method = getattr(self.root, api)

        def run(state: State, *inputs: Any) -> tuple[State, Any]:
            frame = context.Frame(context.APPLY, self.scopes, state=state)
            frame.trainable = dict.fromkeys(self.trainable, True)
            with context.active(frame):
                outputs = method(*inputs)
            return frame.state, outputs

        run.__name__ = run.__qualname__ = f"{self.root.name}_{api}"
        return run

    def init_state(self, seed: int | jax.Array = 0, seeds: int | None = None) -> State:
        """Create every state variable with concrete values (one jitted init over all APIs;
        their unused outputs are dead code that XLA drops). With `seeds=K`, K independent
        states stacked on a leading axis, the k-th from seed `seed + k`."""
        key = jax.random.PRNGKey(seed) if isinstance(seed, int) else seed
        if seeds is not None:
            key = jnp.stack([jax.random.PRNGKey(seed + k) for k in range(seeds)])
        batch, time = self.batch_size or 1, self.time_size or 1
        inputs = {name: {arg: space.zeros(batch, time) for arg, space in sig.inputs.items()}
                  for name, sig in self.apis.items()}

        if seeds is None and self._init_trace is not None:  # traced already, by mg.build
            compiled = compile_quickly(self._init_trace.lower())
            state = compiled(key, inputs)
        else:
            def init(key):
                frame = context.Frame(context.INIT, self.scopes, key=key)
                with context.active(frame):
                    for name, args in inputs.items():
                        getattr(self.root, name)(**jax.tree.map(jnp.asarray, args))
                return frame.state

            fn = init if seeds is None else jax.vmap(init)
            compiled = compile_quickly(jax.jit(fn).lower(key))
            state = compiled(key)
        if not same_signature(abstract_of(state), self.state_spec_for(seeds)):
            raise StateError(f"{self.root.name}: the state created now differs from the state "
                             f"recorded by mg.build (state created on a Python branch?)")
        return state

    def state_spec_for(self, seeds: int | None) -> State:
        """The state's abstract values, stacked on a leading axis of `seeds` if given."""
        if seeds is None:
            return self.state_spec
        return jax.tree.map(lambda s: jax.ShapeDtypeStruct((seeds, *s.shape), s.dtype),
                            self.state_spec)

    # ---- inspecting --------------------------------------------------------------------------
    def state_table(self, path: str | None = None, recursive: bool = False) -> list[StateEntry]:
        """The state arrays of component `path` (and of those inside it if `recursive`), or of
        the whole graph: name, shape, dtype, trainable or not, bytes (`StateEntry`)."""
        return [row for scope, rows in self._state.items() if _inside(scope, path, recursive)
                for row in rows]

    def param_count(self, path: str | None = None, recursive: bool = True) -> int:
        """Number of trainable scalars in component `path` (and below it if `recursive`)."""
        return sum(row.size for row in self.state_table(path, recursive) if row.trainable)

    def state_bytes(self, path: str | None = None, recursive: bool = True) -> int:
        """Bytes of all state (parameters included) in component `path` (and below it if
        `recursive`), or in the whole graph."""
        return sum(row.nbytes for row in self.state_table(path, recursive))

    # ---- drawing -----------------------------------------------------------------------------
    def drawing(self, depth: int | None = None, focus: str | None = None,
                show_params: bool = True, rankdir: str = "LR", data: bool = True,
                costs: Mapping[str, Mapping[str, Any]] | None = None,
                collapse: bool = True) -> Any:
        """What `render` draws: components as nested clusters with their parameters and state,
        APIs, calls and data flow with their spaces.

        Args:
            depth: Collapse components deeper than this (the HTML explorer starts collapsed
                there and can expand them).
            focus: Keep only what this root API reaches.
            show_params: Show parameter counts and state tables.
            rankdir: "LR" or "TB".
            data: Draw data-flow edges besides calls.
            costs: Root API name -> its measured costs (flops, bytes accessed, memory,
                compile seconds), as an executor reports them (`exe.costs()`).
            collapse: False keeps every component (what the explorer draws; `depth` is then
                where it starts collapsed).
        """
        from metagraph.drawing import build_drawing

        return build_drawing(self.nx, depth=depth, focus=focus, show_params=show_params,
                             rankdir=rankdir, data=data, costs=costs, collapse=collapse,
                             title=f"{type(self.root).__name__} '{self.root.name}'")

    def to_dot(self, **options: Any) -> str:
        """The graph as Graphviz DOT text (options as for `drawing`)."""
        from metagraph.drawing import to_dot

        return to_dot(self.drawing(**options))

    def render(self, path: Any, **options: Any) -> Any:
        """Draw the graph to `path` by suffix: `.html` the interactive explorer (one offline
        file), `.svg`, `.png`, `.pdf` or `.dot` (options as for `drawing`; an executor's
        `costs=` show on the root APIs). Uses Graphviz when installed, a matplotlib layout
        otherwise."""
        from metagraph.drawing import render

        interactive = str(path).lower().endswith(".html")
        return render(self.drawing(collapse=not interactive, **options), path)

    def _repr_svg_(self) -> str:  # Jupyter's static drawing
        from metagraph.drawing import svg_text

        return svg_text(self.drawing())

    def _repr_html_(self) -> str:
        """Jupyter shows the interactive explorer, and the static SVG where scripts are off."""
        from metagraph.drawing import notebook_html

        return notebook_html(self.drawing(collapse=False), self.drawing())

    def summary(self) -> str:
        """A text table: components (class, parameters, state bytes), root APIs with their
        spaces, calls, data flow, and every state array (shape, dtype, bytes)."""
        lines = [f"MetaGraph of {type(self.root).__name__} '{self.root.name}': "
                 f"{len(self.components)} components, {self.param_count():,} parameters, "
                 f"{bytes_text(self.state_bytes())} of state"]
        lines.append("Components:")
        for path, component in self.components.items():
            depth = path.count("/")
            lines.append(f"  {'  ' * depth}{path.rsplit('/', 1)[-1]:<24} "
                         f"{type(component).__name__:<20} params={self.param_count(path):,} "
                         f"state={bytes_text(self.state_bytes(path))}")
        lines.append("APIs:")
        for sig in self.apis.values():
            lines.append(f"  {sig}")
        calls = list(schema.edges_of(self.nx, CallEdge))
        lines.append(f"Calls: {len(calls)}")
        for caller, callee, call in calls:  # one line per distinct (input, output) of one call
            for flowed, returned in call.signatures:
                args = ", ".join(f"{k}: {v}" for k, v in flowed.items())
                lines.append(f"  {caller} -> {callee}({args}) -> {returned}")
        flows = [(u, v, f) for u, v, e in schema.edges_of(self.nx, CallEdge, DataEdge)
                 for f in e.flows]
        lines.append(f"Data flow: {len(flows)}")
        for producer, consumer, flow in flows:  # from a part of an output: `step['obs']`
            source = f"input:{flow.output}" if producer == INPUT else producer + flow.output
            lines.append(f"  {consumer}({flow.argument}: {flow.space}) <- {source}")
        lines.append("State:")
        for row in self.state_table():
            kind = "param" if row.trainable else "state"
            lines.append(f"  {row.component}:{row.full_name:<16} {kind:<6} "
                         f"{row.dtype.name}[{','.join(map(str, row.shape))}] "
                         f"{row.size:,} scalars, {bytes_text(row.nbytes)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"MetaGraph(root={self.root.name!r}, apis={list(self.apis)}, "
                f"components={len(self.components)}, params={self.param_count()})")


def _inside(scope: str, path: str | None, recursive: bool) -> bool:
    return path is None or scope == path or (recursive and scope.startswith(path + "/"))
