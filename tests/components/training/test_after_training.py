"""After training (issue 24): a run loads from Python and acts, exports its acting API alone
(loaded and run in a fresh process that never imports the library's agents, for every
built-in algorithm and a user's), and a received run directory is data: its user code is
imported only when named again or trusted, and only unchanged. Every command runs as a user
types it (`command_line.metagraph`, in this process, forgetting the user's modules after each
command as a fresh process would); the exported files are loaded in fresh processes that
import neither the library's agents nor JAX where the format promises it."""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest
from command_line import USER_MODULE, metagraph, refusal

from components.training import UntrustedCodeError, load, resolve

SMALL = ["--set", "hidden=[8]"]
RUNS = {  # algorithm: (environment, settings of a run of a few seconds)
    "reweight": ("CartPole-v1", ["--steps", "300", "--set", "num_envs=8", "--set",
                                 "fit_paths=4", "--set", "fit_steps=2"]),
    "ppo": ("CartPole-v1", ["--steps", "64", "--set", "num_envs=2", "--set", "num_steps=16",
                            "--set", "epochs=1", "--set", "minibatches=1", "--set",
                            "iterations_per_call=2"]),
    "dqn": ("CartPole-v1", ["--steps", "32", "--set", "num_envs=2", "--set", "rollout=4",
                            "--set", "n_step=2", "--set", "buffer_size=256", "--set",
                            "batch_size=8", "--set", "iterations_per_call=2"]),
    "sac": ("Pendulum-v1", ["--steps", "64", "--set", "batch_size=8", "--set",
                            "buffer_size=512", "--set", "learning_starts=32", "--set",
                            "rollout=16", "--set", "iterations_per_call=2"]),
    "impala": ("CartPole-v1", ["--steps", "64", "--set", "num_envs=2", "--set",
                               "num_steps=16"]),
    "user_reinforce:Reinforce": ("CartPole-v1", ["--steps", "64", "--set", "num_envs=2",
                                                 "--set", "num_steps=16"]),
}
USER = "user_reinforce:Reinforce"
NO_AGENTS = textwrap.dedent("""
    import sys, numpy as np
    from backends import xla
    api = xla.load(sys.argv[1])
    obs = np.load(sys.argv[2])
    key = [np.load(sys.argv[4])] if len(sys.argv) > 4 else []
    np.save(sys.argv[3], np.asarray(api(obs, *key)))
    np.save(sys.argv[3] + ".first.npy", np.asarray(api(obs[:1], *key)))  # any batch size
    assert not [m for m in sys.modules if m.split(".")[0] in ("components", "user_reinforce")]
""")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A directory holding the user's module and one small trained run per algorithm."""
    directory = tmp_path_factory.mktemp("after")
    shutil.copy(USER_MODULE, directory / "user_reinforce.py")
    for algo, (env_id, settings) in RUNS.items():
        metagraph(directory, "train", env_id, "--algo", algo, "--out", run_name(algo),
                  *settings, *SMALL)
    return directory


def run_name(algo: str) -> str:
    return algo.partition(":")[0]


def algo_option(algo: str) -> list[str]:
    return ["--algo", algo] if ":" in algo else []


def observations(agent, n: int = 5) -> np.ndarray:
    return np.random.default_rng(7).normal(size=(n, *agent.observation_shape)).astype(np.float32)


def run_exported(directory: Path, path: Path, obs: np.ndarray, key=None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The exported API's actions for `obs` and for its first row alone, computed in a fresh
    process that imports only `backends.xla` (and asserts that no agent, no `components`
    module, was imported)."""
    np.save(directory / "obs.npy", obs)
    args = [str(path), str(directory / "obs.npy"), str(directory / "out.npy")]
    if key is not None:
        np.save(directory / "key.npy", np.asarray(key))
        args.append(str(directory / "key.npy"))
    subprocess.run([sys.executable, "-c", NO_AGENTS, *args], check=True, cwd=directory,
                   timeout=300)
    return np.load(directory / "out.npy"), np.load(directory / "out.npy.first.npy")


@pytest.mark.parametrize("algo", list(RUNS))
def test_an_exported_policy_acts_like_the_agent_without_the_library(runs, algo):
    name = run_name(algo)
    metagraph(runs, "export", name, "-o", f"{name}.mgx", *algo_option(algo))
    named = resolve(f"{runs / 'user_reinforce.py'}:Reinforce") if ":" in algo else None
    agent = load(runs / name, algo=named, eval_envs=5)
    obs = observations(agent)
    expected = np.asarray(agent.executor.greedy(obs))  # the whole agent's own greedy API
    batch, first = run_exported(runs, runs / f"{name}.mgx", obs)
    np.testing.assert_array_equal(batch, expected)
    np.testing.assert_allclose(first, expected[:1], rtol=1e-5, atol=1e-6)
    from backends import xla

    kept = " ".join(xla.load(runs / f"{name}.mgx").state)
    for left_out in ("optimizer", "replay", "target", "env"):
        assert left_out not in kept, kept


def test_a_stochastic_export_samples_like_the_agent(runs):
    metagraph(runs, "export", "ppo", "-o", "ppo-stochastic.mgx", "--stochastic")
    agent = load(runs / "ppo", eval_envs=5)
    obs, key = observations(agent), np.asarray(jax.random.PRNGKey(11))
    expected = np.asarray(agent.executor.act(obs, key))
    np.testing.assert_array_equal(run_exported(runs, runs / "ppo-stochastic.mgx", obs, key)[0],
                                  expected)
    np.testing.assert_array_equal(agent.predict(obs, deterministic=False, key=key), expected)


def test_export_without_a_stochastic_api_is_one_line(runs, capsys, monkeypatch):
    monkeypatch.chdir(runs)  # refusals in this process (a fresh one costs seconds)
    said = refusal(capsys, ["export", "dqn", "-o", "x.mgx", "--stochastic"])
    assert "no root API act(observation, key)" in said


@pytest.mark.parametrize("algo", ["ppo", "sac"])
def test_load_predicts_one_observation_or_a_batch(runs, algo):
    agent = load(runs / algo, eval_envs=5)
    obs = observations(agent)
    batch = agent.predict(obs)
    np.testing.assert_array_equal(batch, np.asarray(agent.executor.greedy(obs)))
    np.testing.assert_allclose(agent.predict(obs[2]), batch[2], rtol=1e-5, atol=1e-6)
    assert agent.predict(obs[2]).shape == batch.shape[1:]
    assert agent.graph is agent.executor.graph and agent.per_seed == [agent]
    with pytest.raises(ValueError, match="predict takes an observation of shape"):
        agent.predict(np.zeros((3, 7), np.float32))
    # nothing cast silently: complex numbers, objects, bool (the task's are floats)
    for wrong in (obs.astype(np.complex64), obs.astype(object), obs > 0):
        with pytest.raises(TypeError, match=f"predict takes observations of real numbers "
                                            f"\\(float or int\\), got dtype {wrong.dtype}"):
            agent.predict(wrong)
    with pytest.raises(TypeError, match="predict's deterministic is True or False, got 'no'"):
        agent.predict(obs, deterministic="no")


def test_load_gives_each_seeds_policy(tmp_path):
    metagraph(tmp_path, "train", *["CartPole-v1", "--algo", "ppo", "--seeds", "2", "--out",
                                   "run", *RUNS["ppo"][1], *SMALL])
    agent = load(tmp_path / "run", eval_envs=5)
    assert [a.seed for a in agent.per_seed] == [0, 1] and agent.per_seed[0] is agent
    stacked = json.loads((tmp_path / "run" / "config.json").read_text())["seeds"]
    assert stacked == 2
    obs = observations(agent)
    for policy in agent.per_seed:  # each seed's state, each acting like its own executor
        np.testing.assert_array_equal(policy.predict(obs),
                                      np.asarray(policy.executor.greedy(obs)))
    w0, w1 = (jax.tree.leaves(a.state["ppo_agent/policy/torso"]) for a in agent.per_seed)
    assert not all(np.array_equal(a, b) for a, b in zip(w0, w1, strict=True))
    metagraph(tmp_path, "export", "run", "-o", "seed1.mgx", "--seed-index", "1")
    np.testing.assert_array_equal(run_exported(tmp_path, tmp_path / "seed1.mgx", obs)[0],
                                  agent.per_seed[1].predict(obs))


# ---- a received run is data, not code (docs/reliability.md, issue 24 part 9) ----------------

def test_a_runs_user_code_runs_only_when_named_again_or_trusted(runs):
    for command in (["evaluate", "user_reinforce", "--episodes", "2"],
                    ["export", "user_reinforce", "-o", "u.mgx"],
                    ["train", "CartPole-v1", "--out", "user_reinforce", "--resume"]):
        done = metagraph(runs, *command, check=False)
        assert done.returncode == 2, done.stderr
        assert "names your code 'user_reinforce:Reinforce'" in done.stderr
        assert "--trust-code" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    with pytest.raises(UntrustedCodeError, match="a run directory is data"):
        load(runs / "user_reinforce")
    metagraph(runs, "evaluate", "user_reinforce", "--episodes", "2", "--trust-code")
    metagraph(runs, "evaluate", "user_reinforce", "--episodes", "2", "--algo", USER)
    done = metagraph(runs, "evaluate", "ppo", "--algo", USER, check=False)
    assert done.returncode == 2 and "names another algorithm" not in done.stdout
    assert "was trained with 'ppo'" in done.stderr


def test_a_changed_user_file_is_refused(runs):
    module = runs / "user_reinforce.py"
    saved = json.loads((runs / "user_reinforce" / "config.json").read_text())
    assert saved["algo_file"] == str(module)
    assert len(saved["algo_sha256"]) == 64
    original = module.read_text()
    try:
        module.write_text(original + "\nprint('this ran')\n")
        for command in (["evaluate", "user_reinforce", "--trust-code"],
                        ["evaluate", "user_reinforce", "--algo", USER],
                        ["train", "CartPole-v1", "--out", "user_reinforce", "--resume",
                         "--trust-code"]):
            done = metagraph(runs, *command, check=False)
            assert done.returncode == 2, done.stderr
            assert "changed since the run" in done.stderr and "this ran" not in done.stdout
    finally:  # the other tests of the module use the run and its file
        module.write_text(original)


def test_an_environment_id_naming_a_module_is_imported_only_when_trusted(runs):
    received = runs / "received"
    shutil.copytree(runs / "ppo", received)
    config = json.loads((received / "config.json").read_text())
    config["env_id"] = "planted:CartPole-v1"  # Gymnasium imports `planted` to make it
    config["config"]["door"] = "gymnasium"
    (received / "config.json").write_text(json.dumps(config))
    (runs / "planted.py").write_text("open('planted-ran', 'w').close()\n")
    for command in (["evaluate", "received", "--episodes", "1"],
                    ["export", "received", "-o", "r.mgx"],
                    ["train", "CartPole-v1", "--out", "received", "--resume"]):
        done = metagraph(runs, *command, check=False)
        assert done.returncode == 2, done.stderr
        assert "env_id 'planted:CartPole-v1' makes Gymnasium import the module 'planted'" \
            in done.stderr and "--trust-code" in done.stderr
        assert not (runs / "planted-ran").exists()
    metagraph(runs, "evaluate", "received", "--episodes", "1", "--trust-code", check=False)
    assert (runs / "planted-ran").exists()


def test_a_stale_temporary_checkpoint_is_removed_by_the_next_command_saying_so(runs):
    stale = runs / "ppo" / ".checkpoint.npz.killed.tmp"
    stale.write_bytes(b"\0" * (8 << 20))  # what a kill -9 in mid-save leaves
    done = metagraph(runs, "evaluate", "ppo", "--episodes", "1")
    assert not stale.exists()
    assert "removed ppo/.checkpoint.npz.killed.tmp (8,388,608 bytes)" in done.stderr


def test_a_temporary_file_a_live_writer_holds_is_kept(runs):
    from components.training import RunDir

    live = runs / "ppo" / ".checkpoint.npz.live.tmp"
    with live.open("wb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as write_atomically holds it while it writes
        RunDir(runs / "ppo", create=False)
        assert live.exists()
    RunDir(runs / "ppo", create=False)
    assert not live.exists()


def test_an_export_replaces_the_file_whole_never_in_place(runs):
    target = runs / "replaced.mgx"
    metagraph(runs, "export", "ppo", "-o", target.name)
    good = target.read_bytes()
    with target.open("rb") as reader:  # a reader of the old file, as a server loading it
        metagraph(runs, "export", "ppo", "-o", target.name, "--stochastic")
        assert reader.read() == good  # written in place, the old file would be cut or mixed
    assert target.read_bytes() != good
    assert not [p for p in runs.iterdir() if p.name.startswith(".replaced.mgx.")]


@pytest.mark.parametrize(("output", "message"), [
    (".", r"\. is a directory; give a file path, e.g. policy.mgx"),
    ("/proc/policy.mgx", "cannot write /proc/policy.mgx"),
])
def test_an_export_that_cannot_be_written_is_one_line(runs, output, message, capsys,
                                                      monkeypatch):
    monkeypatch.chdir(runs)
    said = refusal(capsys, ["export", "ppo", "-o", output])
    assert re.search(message, said), said


def test_an_export_into_a_missing_folder_creates_it(runs):
    metagraph(runs, "export", "ppo", "-o", "new/folder/policy.mgx")
    assert (runs / "new" / "folder" / "policy.mgx").stat().st_size > 0


ONNX_RUN = textwrap.dedent("""
    import sys, numpy as np, onnxruntime
    session = onnxruntime.InferenceSession(sys.argv[1])
    np.save(sys.argv[3], session.run(None, {"observation": np.load(sys.argv[2])})[0])
    assert "jax" not in sys.modules and "components" not in sys.modules
""")


@pytest.mark.parametrize("algo", ["ppo", "sac"])
def test_an_onnx_export_acts_like_the_agent_in_onnxruntime(runs, algo):
    pytest.importorskip("jax2onnx")
    pytest.importorskip("onnxruntime")
    metagraph(runs, "export", algo, "--format", "onnx", "-o", f"{algo}.onnx")
    agent = load(runs / algo)
    obs = observations(agent, 9)
    np.save(runs / "obs.npy", obs)
    subprocess.run([sys.executable, "-c", ONNX_RUN, str(runs / f"{algo}.onnx"),
                    str(runs / "obs.npy"), str(runs / "onnx.npy")], check=True, timeout=300)
    np.testing.assert_allclose(np.load(runs / "onnx.npy"), agent.predict(obs), rtol=1e-5,
                               atol=1e-5)
    done = metagraph(runs, "export", algo, "--format", "onnx", "--stochastic", "-o", "s.onnx",
                     check=False)
    assert done.returncode == 2 and "export it as .mgx" in done.stderr
