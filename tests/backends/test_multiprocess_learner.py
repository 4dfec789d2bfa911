"""A learner split over two processes on JAX's distributed runtime (two subprocesses on
localhost, CPU collectives through Gloo, each with its half of every batch) gives the same
losses and parameters as one process on the whole batches."""

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from backends import xla

SCRIPT = Path(__file__).with_name("multiprocess_learner_run.py")
spec = importlib.util.spec_from_file_location("multiprocess_learner_run", SCRIPT)
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    out = tmp_path_factory.mktemp("group")
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env.pop("XLA_FLAGS", None)  # one CPU device per process
    port = free_port()
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), str(i), "2", str(port), str(out)],
                              env=env, cwd=Path(__file__).parents[2], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for i in range(2)]
    logs = []
    for proc in procs:
        try:
            logs.append(proc.communicate(timeout=120)[0])
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
    for proc, log in zip(procs, logs, strict=True):
        assert proc.returncode == 0, log[-3000:]
    return [(json.loads((out / f"report{i}.json").read_text()),
             list(np.load(out / f"state{i}.npz").values())) for i in range(2)]


@pytest.fixture(scope="module")
def reference():
    exe = xla.lower(run.graph(), seed=run.SEED)  # one process, one device, whole batches
    losses = run.learn(exe, run.batches())
    return losses, run.leaves(exe.get_state())


def test_each_process_learns_on_its_half_over_a_two_process_mesh(group):
    for index, (report, _) in enumerate(group):
        assert (report["process"], report["processes"], report["mesh_devices"]) == (index, 2, 2)
        t, n = run.CONFIG["num_steps"], run.CONFIG["num_envs"]
        assert report["local_obs_shape"] == [t, n // 2, 4]  # time-major: half the envs
        assert report["all_reduce"]  # XLA's collective, not ours


def test_two_processes_give_the_single_process_result(group, reference):
    losses, state = reference
    for report, leaves in group:
        assert report["losses"] == pytest.approx(losses, rel=1e-5)
        assert len(leaves) == len(state)
        for got, want in zip(leaves, state, strict=True):
            scale = float(np.max(np.abs(want))) + 1e-12 if want.size else 1.0
            assert float(np.max(np.abs(got - want), initial=0.0)) / scale < 1e-5
    # and the two processes hold the same replicated state
    for a, b in zip(group[0][1], group[1][1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_global_inputs_on_one_process_are_the_whole_batch(reference):
    graph = run.graph()
    from components.agents.impala_agent import ImpalaAgent

    # every input's batch axis (time-major trajectories split along the environments), so
    # that the batch splits over however many local devices there are
    dp = xla.DataParallel.across_processes(batch_axes=ImpalaAgent.batch_axes())
    assert not dp.multi_process and dp.size == jax.device_count()
    batch = run.batches()[0]
    assert all(np.array_equal(a, b) for a, b in
               zip(dp.local_part(graph, "learn", batch), batch, strict=True))
    inputs = dp.global_inputs(graph, "learn", batch)
    assert [x.shape for x in inputs] == [np.shape(b) for b in batch]


def test_an_algorithms_update_runs_unchanged_on_the_process_local_executor(reference):
    from backends.xla.process_local import ProcessLocalExecutor
    from components.agents.impala_agent import ImpalaAgent
    from components.training.algorithms import Impala

    graph = run.graph()
    dp = xla.DataParallel.across_processes(ImpalaAgent.batch_axes())
    exe = ProcessLocalExecutor(xla.lower(graph, seed=run.SEED, data_parallel=dp))
    names = list(graph.apis["learn"].inputs)
    rows = Impala().distributed().update(
        exe, None, [{**dict(zip(names, batch, strict=True)), "episodes": 0,
                     "episode_return_sum": 0.0} for batch in run.batches()], None)
    losses, state = reference
    assert [row["loss"] for row in rows] == pytest.approx(losses, rel=1e-5)
    for got, want in zip(run.leaves(exe.get_state()), state, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="data_parallel"):
        ProcessLocalExecutor(xla.lower(graph))
