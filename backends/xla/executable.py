"""One root API lowered to XLA: the graph's pure function, transformed (`transforms.py`: seeds,
data parallelism), lowered and compiled once per input signature, inspectable like JAX's own
stages: `lower(...)` returns JAX's `Lowered` (it compiles), `compile(...)` its `Compiled` (it
runs), and `as_text()`, `cost_analysis()`, `memory_analysis()` read them."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import jax

from backends.inputs import signature_key
from backends.xla.transforms import Transform
from metagraph import runtime_checks
from metagraph.graph import MetaGraph, State

# XLA compiles with Python's lock released: a compile on this thread overlaps the caller's work
# (tracing and compiling other APIs, initialising the state, running them).
_COMPILER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metagraph-xla-compile")


class ApiExecutable:
    """The XLA executables of one root API, keyed by input signature.

    The lowered function is `transform.pure(f)` of the graph's `f: (state, *inputs) ->
    (state', outputs)`, with the state buffers donated, so XLA updates parameters and buffers
    in place.
    """

    def __init__(self, graph: MetaGraph, api: str, compiler_options: dict[str, Any] | None,
                 donate_state: bool = True, transform: Transform | None = None):
        self.graph, self.api = graph, api
        self.transform = transform or Transform()
        self.compiler_options = dict(compiler_options or {})
        # checks inside loops, reported
        self.pure = self.transform.pure(runtime_checks.reporting(graph.pure(api)))
        self.donate = (0,) if donate_state else ()
        self._stages: dict[tuple, tuple[jax.stages.Lowered, jax.stages.Compiled]] = {}
        self._reports: set[tuple] = set()  # signatures whose program holds runtime checks
        self._pending: dict[tuple, tuple[jax.stages.Lowered, Future]] = {}
        self._last: tuple | None = None

    def __call__(self, state: State, inputs: tuple, key: tuple) -> tuple[State, Any]:
        """Run on `inputs` whose signature is `key` (`backends.inputs.signature_key`)."""
        stages = self._stages.get(key)
        if stages is None:
            stages = self._compile(key, inputs)
        self._last = key
        out = stages[1](state, *inputs)
        return jax.block_until_ready(out) if key in self._reports else out

    def last_compiled(self) -> Any:
        """The compiled executable of the signature called last (None before any call): the
        executor's fast path calls it directly while the signature does not change."""
        return self._stages[self._last][1] if self._last in self._stages else None

    def last_reports(self) -> bool:
        """Whether the program of the signature called last holds runtime checks: its calls
        wait for it to finish, so that a failing check is raised by the call that failed
        (XLA runs a large program, and its host callback, after the call returned)."""
        return self._last in self._reports

    def compile_in_background(self, batch_size: int = 1, time_size: int = 1) -> None:
        """Lower now for the graph's input spaces at these sizes and compile on a worker
        thread; the first call with that signature waits for it. Tracing stays on the
        caller's thread (components trace through thread-local frames)."""
        inputs = self._abstract_inputs(batch_size, time_size)
        key = signature_key(inputs)
        if key not in self._stages and key not in self._pending:
            lowered = self._lowered(inputs, key)
            self._pending[key] = (lowered, _COMPILER.submit(lowered.compile,
                                                            self.compiler_options or None))

    def _compile(self, key: tuple, inputs: tuple) -> tuple:
        if key in self._pending:
            lowered, compiled = self._pending.pop(key)
            self._stages[key] = (lowered, compiled.result())
        else:
            lowered = self._lowered(inputs, key)
            self._stages[key] = (lowered, lowered.compile(self.compiler_options or None))
        return self._stages[key]

    def _lowered(self, inputs: tuple, key: tuple | None = None) -> jax.stages.Lowered:
        abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), inputs)
        jitted = jax.jit(self.pure, donate_argnums=self.donate,
                         **self.transform.jit_options(self.graph, self.api, abstract))
        traced = runtime_checks.checks_traced()
        lowered = jitted.lower(self.transform.state_spec(self.graph), *abstract)
        if key is not None and runtime_checks.checks_traced() > traced:
            self._reports.add(key)
        return lowered

    # ---- inspecting --------------------------------------------------------------------------
    @property
    def signatures(self) -> list[tuple]:
        """The input signatures compiled so far (or compiling), as ((shape, dtype), ...)."""
        return list(self._stages) + list(self._pending)

    def lower(self, batch_size: int = 1, time_size: int = 1) -> jax.stages.Lowered:
        """JAX's lowered stage for the graph's input spaces at the given batch and time sizes
        (its `compile()` gives a `Compiled`; `as_text()` its StableHLO). The executable that
        calls of this signature run is `compile(...)`'s."""
        inputs = self._abstract_inputs(batch_size, time_size)
        key = signature_key(inputs)
        return self._stages[key][0] if key in self._stages else self._lowered(inputs, key)

    def compile(self, batch_size: int = 1, time_size: int = 1) -> jax.stages.Compiled:
        """The compiled stage for the graph's input spaces at the given batch and time sizes,
        without running it (compiled now unless it was): the executable that calls with that
        signature run."""
        return self._staged(batch_size, time_size)[1]

    def _staged(self, batch_size: int, time_size: int) -> tuple:
        inputs = self._abstract_inputs(batch_size, time_size)
        key = signature_key(inputs)
        if key not in self._stages:
            self._compile(key, inputs)
        self._last = self._last or key
        return self._stages[key]

    def _abstract_inputs(self, batch_size: int, time_size: int) -> tuple:
        return self.transform.abstract_inputs(tuple(
            space.to_abstract(batch_size, time_size)
            for space in self.graph.apis[self.api].inputs.values()))

    def _current(self) -> tuple:
        return self._stages[self._last] if self._last is not None else self._staged(1, 1)

    def as_text(self, dialect: str = "stablehlo") -> str:
        """The StableHLO (or `dialect="hlo"`) text of the last executable used (or, before any
        call, of the one for batch size 1)."""
        return self._current()[0].as_text(dialect=dialect)

    def cost_analysis(self) -> Any:
        """XLA's cost estimate (flops, bytes accessed) of the last executable used."""
        return self._current()[1].cost_analysis()

    def memory_analysis(self) -> Any:
        """XLA's memory analysis of the executable that ran last (compiling one if none has)."""
        return self._current()[1].memory_analysis()

    def __repr__(self) -> str:
        return (f"ApiExecutable({self.graph.root.name}.{self.api}, "
                f"{len(self._stages)} compiled signature(s), {len(self._pending)} compiling)")
