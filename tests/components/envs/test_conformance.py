"""Every built-in task passes the engine's conformance check (`components.envs.check`), and the
check fails where a door misbehaves (it is a check that can fail)."""

import numpy as np
import pytest

import components.envs as envs
from components.envs.engine import conformance


@pytest.mark.parametrize("env_id", [i for i in envs.env_ids() if i not in envs.ATARI_IDS])
def test_every_built_in_task_conforms(env_id):
    report = envs.check(env_id, twin=env_id in envs.ENV_IDS)
    assert set(report.values()) == {"ok"}, report


def test_the_check_names_a_failing_case(monkeypatch):
    real = conformance._run_host

    def off_by_one(env, actions):  # a host pool whose rewards are wrong
        out = real(env, actions)
        out[1] = out[1] + np.float32(1.0)
        return out

    monkeypatch.setattr(conformance, "_run_host", off_by_one)
    with pytest.raises(envs.ConformanceError, match="host pool equals in-graph door"):
        envs.check("CartPole-v1")
