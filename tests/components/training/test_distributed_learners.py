"""The distributed learners in one process (`LocalSamplers`): path reweighting pools every
sampler's paths before reweighting (checked against NumPy formulas on the pooled qualities),
and IMPALA learns CartPole."""

import numpy as np
import pytest

from backends import xla
from components.agents.impala_config import ImpalaConfig
from components.agents.reweight_config import ReweightConfig
from components.training import RunSpec, keys_for, resolve, train
from components.training.algorithms import Reweight
from components.training.distributed import Learner, LocalSamplers


def test_reweighting_learner_reweights_the_pooled_paths_of_all_samplers():
    config = ReweightConfig(num_envs=12, fit_paths=6, fit_steps=1, hidden=(16,),
                            scheme="exponential", temperature=1.0)
    exe = xla.lower(Reweight().build("CartPole-v1", config, 10_000, 1), seed=0)
    pool = LocalSamplers("reweight", "CartPole-v1", config.to_dict(), 0, 3)
    seen = []
    next_result = pool.next

    def spy():
        index, result = next_result()
        seen.append((index, result["batch"]))
        return index, result

    pool.next = spy
    learner = Learner(Reweight().distributed(), exe, config, pool, 0,
                      lambda call: keys_for(0, None, call))
    row = learner.step(0)[0]
    assert sorted(index for index, _ in seen) == [0, 1, 2]
    assert all(batch["quality"].shape == (4,) for _, batch in seen)
    q = np.concatenate([batch["quality"] for _, batch in sorted(seen, key=lambda s: s[0])])
    q = q / (q.std() + 1e-6)
    w = np.exp((q - q.max()) / config.temperature)
    w /= w.sum()
    assert row["bits"] == pytest.approx(np.sum(w * np.log2(w * len(w))), rel=1e-4, abs=1e-5)
    assert row["ess"] == pytest.approx(1.0 / np.sum(w**2), rel=1e-4)
    returns = np.concatenate([batch["return"] for _, batch in seen])
    assert row["episode_return_mean"] == pytest.approx(returns.mean())


def test_impala_learns_cartpole_in_one_process(tmp_path):
    metrics = train(RunSpec.make("CartPole-v1", "impala", ImpalaConfig(), steps=150_000,
                                 num_samplers=2), tmp_path, progress=False)
    returns = [row["episode_return_mean"] for row in metrics]
    assert np.mean(returns[:5]) < 40
    assert np.mean(returns[-10:]) > 100
    assert {row["policy_lag"] for row in metrics} <= {0, 1}  # in process: one version behind


def test_ppo_runs_pipelined_and_its_observation_statistics_travel(tmp_path):
    """PPO's distributed form (`PPOSamplers`) in the pipelined runner: it learns CartPole with
    batches at most one version old; the sampler's `NormalizeObservation` counts every step it
    samples and the learner takes its moments with each batch, so the run's checkpoint holds
    statistics of every step learned and `load` acts with them."""
    from components.agents.ppo_config import PPOConfig
    from components.training import load

    config = PPOConfig(normalise_observations=True)
    metrics = train(RunSpec.make("CartPole-v1", "ppo", config, steps=60_000, runner="pipeline",
                                 num_samplers=1), tmp_path, progress=False)
    returns = [row["episode_return_mean"] for row in metrics
               if row["episode_return_mean"] is not None]
    assert np.mean(returns[-10:]) > 100
    assert {row["policy_lag"] for row in metrics} <= {0, 1}
    agent = load(tmp_path)
    counts = [value for scope, state in agent.state.items()
              if scope.endswith("observation_normaliser")
              for name, value in state.items() if name == "count"]
    assert counts and float(counts[0]) >= metrics[-1]["env_steps"]
    assert agent.predict(np.zeros(4, np.float32)) in (0, 1)


@pytest.mark.parametrize("algo, options, message", [
    ("dqn", {"runner": "pipeline"}, "dqn has no distributed form"),
    ("ppo", {"actor_device": "cpu"}, "this run has none"),
    ("impala", {"runner": "pipeline", "actor_device": "tpu"}, "no 'tpu' device"),
    ("impala", {"num_samplers": 0}, "num_samplers must be a positive int"),
    ("impala", {"runner": "spark"}, "unknown runner 'spark'"),
    ("impala", {"seeds": 2}, "several seeds at once are not supported with samplers"),
    # on a cluster (an address) the samplers are not bound by this machine's cores
    ("reweight", {"num_samplers": 3, "runner": "ray", "address": "auto"},
     "num_envs=128 must divide evenly among 3 samplers"),
])
def test_bad_distributed_settings_are_clear_errors(tmp_path, algo, options, message):
    config = resolve(algo).config_class()
    process = {key: options.pop(key) for key in ("actor_device", "address") if key in options}
    with pytest.raises(ValueError, match=message):  # refused by the spec or by train
        train(RunSpec.make("CartPole-v1", algo, config, steps=10, **options), tmp_path,
              progress=False, **process)


def test_open_learner_takes_the_run_spec_and_its_old_spelling_still_works():
    """`open_learner(spec, parts, exe, ...)`; the positional spelling of before warns and
    gives the same learner: the same first row from the same keys."""
    from components.training.algorithms import Impala
    from components.training.distributed import open_learner

    config = ImpalaConfig(num_envs=2, num_steps=8, hidden=(8,))
    spec = RunSpec.make("CartPole-v1", "impala", config, seed=3, num_samplers=1)
    rows = []
    for old in (False, True):
        exe = xla.lower(Impala().build("CartPole-v1", config, 10_000, 1), seed=3)
        parts = Impala().distributed()
        if old:
            with pytest.warns(DeprecationWarning, match=r"open_learner\(spec, parts, exe"):
                learner = open_learner("impala", parts, exe, config, "CartPole-v1", 3, "local",
                                       1, 0, 0, lambda v: keys_for(3, None, v))
        else:
            learner = open_learner(spec, parts, exe)
        try:
            rows.append(learner.step(0)[0])
        finally:
            learner.close()
    assert rows[0]["loss"] == rows[1]["loss"] and rows[0]["steps"] == rows[1]["steps"] == 16
    with pytest.raises(TypeError, match="got more arguments"):
        open_learner(spec, parts, exe, 1)
