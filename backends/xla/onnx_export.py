"""A root API as an ONNX model (`jax2onnx`), for runtimes without JAX (`onnxruntime`, ONNX
Runtime Web, TensorRT): the API's pure function over only the state it needs
(`export.needed_state`), that state baked in as the model's constants.

    data = export_onnx(graph, "greedy", state, [jax.ShapeDtypeStruct((BATCH, 4), np.float32)])
    session = onnxruntime.InferenceSession(data)

Needs the `onnx` extra (`pip install -e ".[onnx]"`). An operation jax2onnx cannot
convert is one `OnnxExportError` naming it.
"""

from __future__ import annotations

import re
from typing import Any

import jax
import numpy as np

from backends.xla.export import needed_state
from metagraph.graph import MetaGraph, State
from metagraph.install_hints import install_hint


class OnnxExportError(ValueError):
    """The API holds an operation that jax2onnx cannot convert (named in the message), or
    jax2onnx is not installed."""


def export_onnx(graph: MetaGraph, api: str, state: State, inputs: list[Any]) -> bytes:
    """Root API `api` of `graph` with `state` as a serialised ONNX model whose inputs are
    `inputs` (`jax.ShapeDtypeStruct`s; a symbolic dimension becomes a dynamic one, named by
    its symbol) and whose outputs are the API's (the state it writes is dropped)."""
    try:
        import jax2onnx
    except ImportError:
        raise OnnxExportError(f"ONNX export needs jax2onnx and onnxruntime: "
                              f"{install_hint('onnx')}") from None
    program, select, _ = needed_state(graph, api, inputs)
    needed = select(state)
    specs: list[Any] = []
    for x in inputs:  # jax2onnx takes a dynamic dimension as its name, in a float32 shape
        if all(isinstance(d, int) for d in x.shape):
            specs.append(x)
        elif x.dtype == np.float32:
            specs.append(tuple(d if isinstance(d, int) else str(d) for d in x.shape))
        else:
            raise OnnxExportError(f"{graph.root.name}.{api}: an input of dtype {x.dtype} with "
                                  f"a dynamic dimension ({x.shape}) cannot be given to "
                                  f"jax2onnx; give it a fixed shape")
    try:
        # nested jits inlined: jax2onnx 0.17's converter of a nested jit (pjit) reads
        # jax._src.core.ClosedJaxpr, which JAX 0.12 no longer has
        with jax.disable_jit():
            model = jax2onnx.to_onnx(lambda *args: program(needed, *args)[1], specs,
                                     model_name=f"{graph.root.name}_{api}",
                                     input_names=list(graph.apis[api].inputs))
    except Exception as error:  # jax2onnx reports an unconverted primitive in its message
        found = re.search(r"primitive[s]?\W+'?([a-z_][a-z0-9_]*)", str(error), re.I)
        what = f"the operation {found.group(1)!r}" if found else "it"
        raise OnnxExportError(f"{graph.root.name}.{api}: jax2onnx cannot convert {what} "
                              f"({type(error).__name__}: {str(error).splitlines()[0][:300]}); "
                              f"export the .mgx form instead") from None
    return model.SerializeToString()
