"""Shared, module-scoped fixtures: XLA compiles are slow on 2 cores, so graphs and executors
are built once and reused."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from importlib.metadata import version

import pytest
from toy_components import Model

import metagraph as mg
from metagraph.spaces import Box, PRNGKey

# XLA's CPU backend without LLVM's optimisation passes and with its element-wise emitters in
# place of the MLIR fusion emitters: the suite's time is mostly XLA compiles (small shapes, run
# for a few steps). Without the optimisation passes compiles take a quarter to a third less CPU
# time (measured: test_ppo_training.py 84 -> 64 s, the MJX refusals 71 -> 45 s); without the
# fusion emitters a quarter less again (2026-11-30: test_ppo_training.py 46 -> 33 s of CPU,
# test_self_play_training.py 61 -> 46 s). Fresh processes started by the tests inherit them;
# benchmarks and users' runs keep XLA's defaults. (jaxlib 0.11 has no fusion emitters' flag,
# and XLA stops at a flag it does not know.)
SUITE_XLA_FLAGS = {"xla_backend_optimization_level": "0"}
if tuple(int(part) for part in version("jaxlib").split(".")[:2]) < (0, 11):
    SUITE_XLA_FLAGS["xla_cpu_use_fusion_emitters"] = "false"
for flag, value in SUITE_XLA_FLAGS.items():
    if flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --{flag}={value}").strip()



def temporary_directory(variable: str, prefix: str, name: str = "") -> None:
    """Point `variable` at a fresh temporary directory (or `name` inside it) unless it is set
    already (by the process that started this one: xdist's workers, a test's fresh process);
    the process that made it removes it when it exits."""
    if variable in os.environ:
        return
    made = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, made, ignore_errors=True)
    os.environ[variable] = os.path.join(made, name) if name else made


# One build tree for every environment extension the tests build, in this process and in the
# fresh processes they start (which inherit the environment): nanobind is compiled once.
temporary_directory("METAGRAPH_EXTENSION_CACHE", "metagraph-ext-")
# ... built unoptimised and without debug symbols (`Quick`): under half the compile time of
# Release; the tasks the tests build step a few environments, and the library's own families
# keep their Release build.
os.environ.setdefault("METAGRAPH_EXTENSION_BUILD_TYPE", "Quick")
# The environment modules a user named (`--env-module`) are recorded for the suite only, not
# in the home directory (components/training/run/named_modules.py).
temporary_directory("METAGRAPH_NAMED_MODULES", "metagraph-named-", "named.json")

MODEL_SPACES = {"x": Box((4,), batch=True), "key": PRNGKey()}

# The heaviest test files, heaviest first (`--durations=0` of a full run summed by file,
# 2026-11-27, evening). With `--dist loadfile` a free worker takes the next file in collection
# order, so a long file collected last runs alone at the end while the others idle: these go
# first, the rest keep their order (largest first keeps every worker busy to the end).
HEAVIEST_FIRST = (
    "components/training/test_after_training.py",
    "components/training/test_self_play_training.py",
    "components/training/test_ppo_training.py",
    "test_docs_code.py",
    "components/envs/mujoco/test_mjx_twin_vs_native.py",
    "components/training/test_ray.py",
    "components/envs/games/test_a_users_game.py",
    "components/envs/games/test_your_own_game.py",
    "components/training/test_user_algorithm.py",
    "components/replay/test_replay_buffers.py",
    "components/training/test_eager_executor.py",
    "components/training/test_alphazero_training.py",
    "components/search/test_game_search.py",
    "components/training/test_reliability.py",
    "components/envs/test_a_users_broken_task.py",
    "components/training/test_distributed_learners.py",
    "components/training/test_curves.py",
    "components/training/test_training_bad_input.py",
    "components/envs/test_shaped_bool_observations.py",
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than this process's cores. Many tests wait (on a fresh
    process, Ray's workers, a terminal): a third worker fills those waits on 2 cores
    (measured on the whole suite: 11:03 with 2 workers, 10:05 with 3)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect the `HEAVIEST_FIRST` files first (a stable sort: tests keep their order in
    their file, and the other files theirs)."""
    rank = {name: i for i, name in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0].removeprefix("tests/"),
                                         len(rank)))


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
