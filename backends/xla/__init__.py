"""The XLA backend: each root API lowered with `jax.jit(...).lower(...)`, compiled with the
caller's XLA compiler options, state donated, one executable per input signature.

    exe = backends.xla.lower(graph, compiler_options={"xla_cpu_enable_fast_math": False})
    actions = exe.act(obs, key)
    exe.executables["act"].lower()            # JAX's Lowered stage (compiles)
    exe.executables["act"].compile()          # JAX's Compiled stage (runs)
    exe.executables["act"].as_text()          # StableHLO
    exe.executables["act"].cost_analysis()
    blob = exe.export("act"); api = backends.xla.load(blob); api(obs, key)
"""

from __future__ import annotations

from typing import Any

from backends.xla.data_parallel import DataParallel
from backends.xla.devices import resolve_device
from backends.xla.executable import ApiExecutable
from backends.xla.executor import XlaExecutor, check_compiler_options
from backends.xla.export import LoadedApi, load
from backends.xla.transforms import Seeds, Transform
from metagraph.graph import MetaGraph, State


def lower(graph: MetaGraph, compiler_options: dict[str, Any] | None = None, seed: int = 0,
          state: State | None = None, donate_state: bool = True,
          seeds: int | None = None, data_parallel: DataParallel | None = None,
          precompile: tuple[str, ...] = (), transform: Transform | None = None,
          device: Any = None) -> XlaExecutor:
    """An executor running `graph`'s root APIs as XLA executables.

    `compiler_options` are XLA's own (`xla_cpu_*`, `xla_gpu_*`, ...; see XLA's
    `debug_options_flags.cc`), checked here: an option XLA rejects raises ValueError.
    Executables compile on first call with a new input signature (or `executables[api].compile()`).
    With `seeds=K`, K independent copies run as one executable (`jax.vmap`): the state of
    seed `seed + k` and every input and output carry a leading axis of K.
    With `data_parallel=DataParallel(...)`, every API runs over a mesh of local devices, its
    inputs split along their batch axes and the state replicated.
    The APIs named in `precompile` are lowered now, for their input spaces at batch and time
    size 1, and compile on a worker thread while the state initialises (XLA releases Python's
    lock while it compiles); their first call waits for the compile.
    `seeds=K` and `data_parallel=dp` are short forms of `transform=Seeds(K)` and
    `transform=dp`: transformations of the graph's pure functions applied before lowering
    (`backends.xla.transforms`); one at a time.
    `device` (a `jax.Device`, or a name: "cpu", "gpu", "gpu:1") places every program and the
    state on that device instead of JAX's default one (a program that steps a native task
    runs on the host or on a CUDA GPU, `components.envs`); with `seeds`, the seeds' too.
    """
    if device is not None and (data_parallel is not None or transform is not None):
        raise ValueError("backends.xla.lower: device places one device's programs; a mesh "
                         "(data_parallel) names its own devices, and a transform takes its "
                         "device as its own argument")
    given = [t for t in (Seeds(seeds, device) if seeds is not None else None, data_parallel,
                         transform) if t is not None]
    if len(given) > 1:
        raise ValueError("backends.xla.lower: seeds, data_parallel and transform cannot be "
                         "combined; give one")
    if not given and device is not None:
        given = [Transform(device)]
    return XlaExecutor(graph, compiler_options, seed, state, donate_state,
                       given[0] if given else None, tuple(precompile))


__all__ = ["ApiExecutable", "DataParallel", "LoadedApi", "Seeds", "Transform", "XlaExecutor",
           "check_compiler_options", "load", "lower", "resolve_device"]
