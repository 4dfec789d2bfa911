"""Distributed runs on a local Ray instance of 2 CPUs: transport that loses nothing, a killed
sampler replaced while the run goes on (IMPALA's, and a user's algorithm named by
MODULE:ATTRIBUTE), IMPALA and path reweighting through the command line, resuming a run from
the learner's checkpoint. Ray is shut down at the end."""

import json
import os
import signal
from pathlib import Path

import jax
import numpy as np
import pytest

ray = pytest.importorskip("ray")

from backends import xla  # noqa: E402
from components.agents.impala_config import ImpalaConfig  # noqa: E402
from components.training import keys_for  # noqa: E402
from components.training.algorithms import Impala  # noqa: E402
from components.training.cli import main  # noqa: E402
from components.training.distributed import Learner, LocalSamplers, RaySamplers  # noqa: E402
from components.training.distributed.ray_samplers import pack, unpack  # noqa: E402
from components.training.registry import resolve  # noqa: E402

CONFIG = ImpalaConfig(num_envs=8, num_steps=16, hidden=(16,))
USER_CODE = Path(__file__).parent / "user_code"  # user_reinforce.py, a user's own module


@pytest.fixture(scope="module")
def cluster():
    # Ray's workers inherit the driver's environment: the user's module on their PYTHONPATH
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(USER_CODE), before) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    if before is None:
        os.environ.pop("PYTHONPATH")
    else:
        os.environ["PYTHONPATH"] = before


@pytest.fixture(scope="module")
def learner_exe():
    return xla.lower(Impala().build("CartPole-v1", CONFIG, 10_000, 1), seed=0)


def test_ray_transport_gives_the_in_process_batches(cluster, learner_exe):
    # 3 batches in one request, packed into one buffer: each equal to the same sampler's in
    # process, a view into that buffer; the weights fetched once, with their version
    weights = learner_exe.get_states("impala_agent/policy")
    local = LocalSamplers("impala", "CartPole-v1", CONFIG.to_dict(), 0, 1)
    remote = RaySamplers("impala", "CartPole-v1", CONFIG.to_dict(), 0, 1, rollouts=3)
    got = {}
    for name, pool in (("local", local), ("remote", remote)):
        pool.publish(weights, 7)
        for _ in range(3):
            pool.request(0)
        got[name] = [pool.next() for _ in range(3)]
        pool.close()
    for (i, here), (j, there) in zip(got["local"], got["remote"], strict=True):
        assert (i, here["version"]) == (j, there["version"]) == (0, 7)
        assert set(here["batch"]) == set(there["batch"])
        for name, array in here["batch"].items():
            np.testing.assert_array_equal(array, there["batch"][name], err_msg=name)
            assert array.dtype == there["batch"][name].dtype
    arrays = [array for _, result in got["remote"] for array in result["batch"].values()]
    starts = [array.__array_interface__["data"][0] for array in arrays]
    ends = [start + array.nbytes for start, array in zip(starts, arrays, strict=True)]
    assert max(ends) - min(starts) == sum(array.nbytes for array in arrays)  # one buffer
    assert not any(array.flags.writeable for array in arrays)  # views of Ray's store


def test_pack_and_unpack_are_inverse():
    rng = np.random.default_rng(0)
    results = [{"batch": {"obs": rng.normal(size=(4, 3, 2)).astype(np.float32),
                          "done": rng.random((4, 3)) < 0.5, "action": rng.integers(0, 2, (4, 3)),
                          "episodes": np.asarray(k)},
                "version": k, "sample_seconds": 0.1 * k} for k in range(3)]
    header, buffer = pack(results)
    assert buffer.dtype == np.uint8 and buffer.nbytes == sum(
        a.nbytes for r in results for a in r["batch"].values())
    back = unpack(header, buffer)
    for result, again in zip(results, back, strict=True):
        assert {k: v for k, v in again.items() if k != "batch"} == {
            k: v for k, v in result.items() if k != "batch"}
        for name, array in result["batch"].items():
            np.testing.assert_array_equal(again["batch"][name], array)
            assert again["batch"][name].dtype == array.dtype
            assert again["batch"][name].shape == array.shape


def kill_a_sampler_mid_run(algo, algorithm, exe, config):
    """Run a learner over 2 Ray samplers, SIGKILL one's process, go on until it is replaced;
    returns the rows, the pool and the samplers' pids before and after."""
    pool = RaySamplers(algo, "CartPole-v1", config.to_dict(), 0, 2)
    learner = Learner(algorithm.distributed(), exe, config, pool, 0,
                      lambda version: keys_for(0, None, version))
    rows = [learner.step(v)[0] for v in range(3)]
    before = pool.pids()
    os.kill(before[0], signal.SIGKILL)  # the sampler's process dies mid-run
    for version in range(3, 60):  # until the death is noticed, then a few more
        rows.append(learner.step(version)[0])
        if pool.replaced and len(rows) >= 12:
            break
    after = pool.pids()
    pool.close()
    return rows, pool, before, after


@pytest.mark.slow  # the same replacement, through the same pool, as the user's algorithm's
# test below (which checks the samplers run ahead too), for IMPALA
def test_a_killed_sampler_is_replaced_and_the_run_goes_on(cluster, learner_exe):
    rows, pool, before, after = kill_a_sampler_mid_run("impala", Impala(), learner_exe, CONFIG)
    assert pool.replaced == 1 and rows[-1]["samplers_replaced"] == 1
    assert after[0] != before[0] and after[1] == before[1]
    assert pool.streams == 3  # the replacement drew a new stream of keys
    assert all(row["steps"] == CONFIG.num_envs * CONFIG.num_steps for row in rows)
    assert all(row["policy_lag"] >= 0 for row in rows)
    assert max(row["policy_lag"] for row in rows) >= 1  # samplers never wait for the learner


def test_a_users_algorithm_survives_a_killed_sampler(cluster, monkeypatch):
    # the user's module is found by name, here and (through PYTHONPATH) in every Ray worker
    monkeypatch.syspath_prepend(str(USER_CODE))
    algorithm = resolve("user_reinforce:Reinforce")
    config = algorithm.config_class(num_envs=2, num_steps=16, hidden=(8,))
    learner = algorithm.distributed().build_learner(algorithm, "CartPole-v1", config, 10_000, 1)
    exe = xla.lower(learner, seed=0)
    weights = exe.get_states("reinforce_agent/policy")
    rows, pool, before, after = kill_a_sampler_mid_run("user_reinforce:Reinforce", algorithm,
                                                       exe, config)
    assert pool.replaced == 1 and rows[-1]["samplers_replaced"] == 1
    assert after[0] != before[0] and after[1] == before[1]
    assert pool.streams == 3
    assert all(row["steps"] == 32 and np.isfinite(row["loss"]) for row in rows)
    assert {"policy_lag", "sample_seconds", "ends", "reward_sum"} <= set(rows[-1])
    assert max(row["policy_lag"] for row in rows) >= 1  # samplers never wait for the learner
    learned = exe.get_states("reinforce_agent/policy")  # the learner went on learning
    assert any(not np.array_equal(a, b) for a, b in
               zip(jax.tree.leaves(weights), jax.tree.leaves(learned), strict=True))


def read_metrics(path):
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow  # a minute on 2 cores; the Ray samplers themselves (started, killed,
# replaced, ahead of the learner) are the user's algorithm's test above, and `--runner` on
# the command line is test_user_algorithm.py's (`--runner pipeline`)
def test_impala_on_ray_from_the_command_line_and_resumed(cluster, tmp_path, capsys):
    out = tmp_path / "impala"
    args = ["train", "CartPole-v1", "--algo", "impala", "--runner", "ray", "--num-samplers",
            "1", "--batches-per-request", "2", "--out", str(out), "--set", "num_envs=8",
            "--set", "num_steps=16", "--set", "hidden=[16]"]
    main([*args, "--steps", "1024"])
    first = read_metrics(out)
    saved = json.loads((out / "config.json").read_text())
    assert (saved["runner"], saved["num_samplers"], saved["batches_per_request"],
            saved["algo"]) == ("ray", 1, 2, "impala")
    assert {"policy_lag", "loss", "episode_return_mean"} <= set(first[-1])
    for name in ("graph.svg", "curve.png", "checkpoint.npz"):
        assert (out / name).stat().st_size > 0
    main(["train", "CartPole-v1", "--out", str(out), "--resume", "--steps", "2048"])
    resumed = read_metrics(out)
    assert resumed[:len(first)] == first
    assert [row["iteration"] for row in resumed] == list(range(len(resumed)))
    assert resumed[-1]["env_steps"] >= 2048
    main(["evaluate", str(out), "--episodes", "5", "--json"])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["episodes"] == 5


@pytest.mark.slow  # the runner's Ray samplers are those of the two tests above; path
# reweighting's distributed form runs in process in test_distributed_learners.py
def test_path_reweighting_on_ray(cluster, tmp_path):
    out = tmp_path / "reweight"
    main(["train", "CartPole-v1", "--algo", "reweight", "--runner", "ray", "--num-samplers",
          "2", "--out", str(out), "--steps", "800", "--set", "num_envs=16",
          "--set", "fit_paths=8", "--set", "fit_steps=2", "--set", "hidden=[16]"])
    rows = read_metrics(out)
    assert rows and all(1.0 <= row["ess"] <= 16.0 and row["bits"] >= 0 for row in rows)
    assert all(row["samplers_replaced"] == 0 for row in rows)
    assert all(row["policy_lag"] == 0 for row in rows)  # on-policy: nothing sampled ahead
