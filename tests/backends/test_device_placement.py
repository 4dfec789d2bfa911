"""Devices are arguments: `backends.xla.lower(graph, device=...)` places every program and the
state on the device named, a native task steps inside a program placed on another device
than JAX's default, and a device this process lacks is refused by name. Two XLA host devices
(a fresh process: the count is set before JAX starts) stand for an actor and a learner."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def report():
    # the host's two devices, also on a machine whose default backend is a GPU
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")
           + " --xla_force_host_platform_device_count=2"}
    script = Path(__file__).with_name("device_placement_run.py")
    root = Path(__file__).parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(root / "tests"), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_programs_and_state_live_on_the_device_named(report):
    first, second = report["devices"]
    model = report["model"]
    assert model["out"] == model["state"] == model["by_object"] == [second]
    assert model["default_state"] == [first]
    assert model["same"]


def test_seeds_run_on_the_device_named(report):
    second = report["devices"][1]
    assert report["seeds"]["out"] == report["seeds"]["state"] == [second]
    assert f"device={second}" in report["seeds"]["repr"]


def test_a_native_task_steps_inside_a_program_on_another_device(report):
    assert report["native"]["devices"] == [report["devices"][1]]
    assert report["native"]["same"]


def test_the_pipeline_samples_on_one_device_and_learns_on_the_other(report):
    first, second = report["devices"]
    assert report["pipeline"]["sampler_state"] == [first]
    assert report["pipeline"]["learner_state"] == [second]
    # two batches in flight, each sampled with the newest weights when it starts: each is one
    # version behind at most (the batch for update k was asked for after version k - 1 was
    # published)
    assert report["pipeline"]["lags"][0] == 0
    # a learner split over both devices unless the user named one (`train --device`)
    assert report["pipeline"]["data_parallel"] == {"None": "DataParallel",
                                                   "cpu:1": "NoneType", "cpu": "NoneType"}
    assert max(report["pipeline"]["lags"]) <= 1


def test_two_host_door_actors_sample_on_one_device_and_learn_on_the_other(report):
    """Sebulba's shape: two sampler threads, each stepping its own host pool through the host
    door while the other's rollout program runs the policy; one batch in flight each, so the
    lag stays at most one version."""
    first, second = report["devices"]
    assert report["actors"]["sampler_state"] == [[first], [first]]
    assert report["actors"]["learner_state"] == [second]
    assert max(report["actors"]["lags"]) <= 1
    assert report["actors"]["steps"] == 6 * 4 * 8


def test_devices_this_process_lacks_are_refused_by_name(report):
    errors = report["errors"]
    assert errors["gpu"].startswith("ValueError") and "no 'gpu' device" in errors["gpu"]
    assert "2 cpu device(s)" in errors["index"]
    assert "not a device name" in errors["malformed"]
    assert errors["type"].startswith("TypeError")
    assert "a mesh" in errors["mesh"]


def test_a_device_index_is_ascii_digits():
    """Issue 55, minor: `cpu:²` gave a bare `int()` error and `cpu:١` or a full-width digit
    was taken as `cpu:1`."""
    from backends.xla.devices import resolve_device

    for name in ("cpu:\u00b2", "cpu:\u0661", "cpu:\uff11"):
        with pytest.raises(ValueError, match="is not a device name"):
            resolve_device(name)
    assert resolve_device("cpu:0").platform == "cpu"
