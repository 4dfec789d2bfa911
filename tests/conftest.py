"""Shared, module-scoped fixtures: XLA compiles are slow on 2 cores, so graphs and executors
are built once and reused."""

from __future__ import annotations

import os
import tempfile

import pytest
from toy_components import Model

import metagraph as mg
from metagraph.spaces import Box, PRNGKey

# XLA's CPU backend without LLVM's optimisation passes: the suite's time is mostly XLA compiles
# (small shapes, run for a few steps), and these take a quarter to a third less CPU time
# (measured: test_ppo_training.py 84 -> 64 s, the MJX refusals 71 -> 45 s). Fresh processes
# started by the tests inherit it; benchmarks and users' runs keep XLA's default (level 2).
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_backend_optimization_level=0").strip()

# One build tree for every environment extension the tests build, in this process and in the
# fresh processes they start (which inherit the environment): nanobind is compiled once.
os.environ.setdefault("METAGRAPH_EXTENSION_CACHE", tempfile.mkdtemp(prefix="metagraph-ext-"))

MODEL_SPACES = {"x": Box((4,), batch=True), "key": PRNGKey()}


@pytest.fixture(scope="session")
def model_graph() -> mg.MetaGraph:
    return mg.build(Model(), MODEL_SPACES)


@pytest.fixture(scope="session")
def model_xla(model_graph):
    from backends import xla

    return xla.lower(model_graph, compiler_options={"xla_cpu_enable_fast_math": False})


@pytest.fixture(scope="session")
def model_eager(model_graph):
    from backends import eager

    return eager.lower(model_graph)


@pytest.fixture
def fresh(model_graph):
    """Reset an executor to the seed-0 initial state before a test uses it."""

    def reset(executor):
        executor.set_state(model_graph.init_state(0))
        return executor

    return reset
