"""The data-parallel learner: IMPALA's `learn` lowered over a mesh of 2 CPU devices (XLA's
host-platform device count, set before JAX starts, hence a fresh process) gives the same
losses and parameters as on one device."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def report():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    script = Path(__file__).with_name("data_parallel_run.py")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_devices_give_the_single_device_result(report):
    assert report["devices"] == 2
    single, parallel = report["losses"]
    assert parallel == pytest.approx(single, rel=1e-5)
    assert report["max_relative_state_diff"] < 1e-5


def test_batch_is_split_and_gradients_all_reduced(report):
    assert report["obs_sharding"] == "P(None, 'batch')"
    assert report["obs_devices"] == 2
    assert report["all_reduce"]


def test_a_batch_axis_that_does_not_split_is_a_clear_error(report):
    assert report["odd_axis_error"].startswith("SpaceError: impala_agent.learn")
    assert "multiple of 2" in report["odd_axis_error"]
