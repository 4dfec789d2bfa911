"""A user's own algorithm, in a module outside the package (copied to a temporary directory
and put on the path), runs everywhere the built-in ones do, each command as a user would type
it (the first in a fresh process with the directory on PYTHONPATH, the others in this one):
train, evaluate, resume, samplers in process and on Ray; and every malformed `--algo` is one
line naming what was expected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from command_line import USER_MODULE, metagraph

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--set", "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]"]


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("user")
    shutil.copy(USER_MODULE, directory / "user_reinforce.py")
    return directory


def test_train_evaluate_and_resume_a_users_algorithm(user_dir):
    metagraph(user_dir, "train", "CartPole-v1", "--algo", "user_reinforce:Reinforce",
              "--out", "run", "--steps", "128", *SMALL, fresh=True)
    run = user_dir / "run"
    assert json.loads((run / "config.json").read_text())["algo"] == "user_reinforce:Reinforce"
    first = rows(run)
    assert [row["env_steps"] for row in first] == [32, 64, 96, 128]
    assert all(set(row) >= {"loss", "ends", "reward_sum"} for row in first)
    # the episodes' returns from the EpisodeStatistics wrapper around its environment
    assert any(row["episode_return_mean"] for row in first)
    assert all((row["episode_return_mean"] is None) == (row["ends"] == 0) for row in first)
    assert (run / "graph.svg").stat().st_size > 0
    result = json.loads(metagraph(user_dir, "evaluate", "run", "--episodes", "3", "--algo",
                                  "user_reinforce:Reinforce", "--json").stdout.splitlines()[-1])
    assert result["episodes"] == 3 and result["return_mean"] > 0
    metagraph(user_dir, "train", "CartPole-v1", "--out", "run", "--resume", "--steps", "192",
              "--trust-code")
    resumed = rows(run)
    assert resumed[:4] == first and [row["iteration"] for row in resumed] == list(range(6))


def test_a_users_algorithm_makes_a_users_environment_with_its_arguments(user_dir):
    """Both outside the package: the user's algorithm reads `--env-kwargs` with
    `env_kwargs_of(config)` and makes the user's Catch (examples/envs/catch) on a 5x3 board,
    as `evaluate` and `export` then do."""
    shutil.copytree(ROOT / "examples" / "envs" / "catch", user_dir / "catch")
    module = ["--env-module", "catch/catch_env.py"]
    metagraph(user_dir, "train", "Catch-v0", "--algo", "user_reinforce:Reinforce", *module,
              "--out", "catch_run", "--steps", "64", "--env-kwargs", "rows=5",
              "--env-kwargs", "columns=3", *SMALL)
    saved = json.loads((user_dir / "catch_run" / "config.json").read_text())
    assert saved["config"]["env_kwargs"] == {"rows": 5, "columns": 3}
    done = metagraph(user_dir, "evaluate", "catch_run", "--episodes", "2", "--algo",
                     "user_reinforce:Reinforce", *module)
    assert "2 episodes: return" in done.stdout
    metagraph(user_dir, "export", "catch_run", "-o", "catch.mgx", "--algo",
              "user_reinforce:Reinforce", *module)
    from backends.xla import load as load_exported

    policy = load_exported(user_dir / "catch.mgx")
    assert np.asarray(policy(np.zeros((1, 15), np.float32))).shape == (1,)  # a 5x3 board


def test_a_users_algorithm_by_file_path_with_samplers(user_dir):
    metagraph(user_dir.parent, "train", "CartPole-v1", "--algo",
              f"{user_dir.name}/user_reinforce.py:Reinforce", "--num-samplers", "2",
              "--out", "dist", "--steps", "96", *SMALL)
    run = user_dir.parent / "dist"
    saved = json.loads((run / "config.json").read_text())
    assert saved["algo"] == f"{user_dir / 'user_reinforce.py'}:Reinforce"  # absolute
    assert saved["num_samplers"] == 2
    got = rows(run)
    assert [row["env_steps"] for row in got] == [32, 64, 96]
    assert all(row["policy_lag"] in (0, 1) for row in got)


def test_a_users_algorithm_pipelined(user_dir):
    """`--runner pipeline`: the user's samplers in threads beside the learner, which the
    user's `build_learner` gives the API its `update` calls (its `build` has none), sharing
    the policy of a `shared` tuple whose other path is None in this configuration."""
    metagraph(user_dir, "train", "CartPole-v1", "--algo", "user_reinforce:Reinforce",
              "--runner", "pipeline", "--num-samplers", "2", "--out", "piped", "--steps",
              "128", *SMALL)
    got = rows(user_dir / "piped")
    assert [row["env_steps"] for row in got] == [32, 64, 96, 128]
    assert all(row["policy_lag"] in (0, 1) for row in got), got  # one batch each in flight
    from components.training import load, resolve

    algorithm = resolve(f"{user_dir / 'user_reinforce.py'}:Reinforce")
    assert "learn" not in algorithm.build("CartPole-v1", algorithm.config_class(), 128, 1).apis
    agent = load(user_dir / "piped", algo=algorithm)  # the checkpoint fits `build`'s graph
    assert agent.predict(np.zeros((3, 4), np.float32)).shape == (3,)


def test_a_users_algorithm_that_only_runs_as_samplers(user_dir):
    """A user's `DistributedAlgorithm` (no `run`): with no runner asked for, two samplers in
    this process feed its learner, sampling and learning in turn, as IMPALA's do."""
    metagraph(user_dir, "train", "CartPole-v1", "--algo", "user_reinforce:ReinforceBySamplers",
              "--out", "by-samplers", "--steps", "64", *SMALL)
    run = user_dir / "by-samplers"
    assert json.loads((run / "config.json").read_text())["num_samplers"] == 2
    got = rows(run)
    assert [row["env_steps"] for row in got] == [32, 64]
    assert all(row["policy_lag"] in (0, 1) for row in got), got
    done = metagraph(user_dir, "evaluate", "by-samplers", "--algo",
                     "user_reinforce:ReinforceBySamplers", "--episodes", "2", "--json")
    assert json.loads(done.stdout.strip().splitlines()[-1])["episodes"] == 2


@pytest.mark.slow  # test_ray.py runs this algorithm on Ray (a sampler killed and replaced),
# and IMPALA from the command line on Ray: this one adds only its own cluster's start-up
def test_a_users_algorithm_on_ray(user_dir):
    pytest.importorskip("ray")
    metagraph(user_dir, "train", "CartPole-v1", "--algo", "user_reinforce:Reinforce",
              "--runner", "ray", "--num-samplers", "2", "--out", "ray", "--steps", "96",
              *SMALL)
    got = rows(user_dir / "ray")
    assert len(got) == 3 and all(row["samplers_replaced"] == 0 for row in got)


@pytest.mark.parametrize("algo, message", [
    ("td3", "unknown algorithm 'td3'; expected one of reweight, ppo, dqn, sac, impala, "
            "alphazero, or "
            "MODULE:ATTRIBUTE"),
    ("user_reinforce:Nope", "user_reinforce has no attribute 'Nope'"),
    ("user_reinforce:NotAnAlgorithm", "is a class NotAnAlgorithm, not an Algorithm"),
    ("user_reinforce:Unfinished", "Unfinished does not implement build, run"),
    ("user_reinforce:UnfinishedBySamplers", "UnfinishedBySamplers does not implement "
                                            "distributed"),
    ("no_such_module:Algo", "cannot import module 'no_such_module'"),
    ("user_reinforce:", "expected MODULE:ATTRIBUTE or PATH.py:ATTRIBUTE"),
    ("missing.py:Algo", "no such file: missing.py"),
])
def test_a_malformed_algo_is_one_clear_line(user_dir, algo, message):
    done = metagraph(user_dir, "train", "CartPole-v1", "--algo", algo, "--out", "bad",
                     check=False)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
