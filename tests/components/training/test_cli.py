"""The `metagraph` command's refusals, each one line with exit status 2, and `metagraph graph`
on a file path (what the README shows; `examples` as a module name collides with dm-haiku's
top-level `examples` package in an installed environment)."""

import json
from pathlib import Path

from command_line import refusal

from components.training import cli

ROOT = Path(__file__).resolve().parents[3]


def test_resume_without_a_checkpoint_is_refused_and_keeps_the_metrics(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({
        "env_id": "CartPole-v1", "algo": "ppo", "seed": 0, "seeds": None, "steps": 64,
        "runner": "local", "num_samplers": None, "config": {}}))
    (run / "metrics.jsonl").write_text('{"iteration": 0}\n')
    message = refusal(capsys, ["train", "CartPole-v1", "--out", str(run), "--resume"])
    assert "cannot resume: checkpoint.npz is missing" in message
    assert (run / "metrics.jsonl").read_text() == '{"iteration": 0}\n'


def test_old_and_bad_command_line_settings_are_one_line(tmp_path, capsys):
    assert "--backend is now --runner" in refusal(
        capsys, ["train", "CartPole-v1", "--backend", "ray", "--out", str(tmp_path / "r")])
    afile = tmp_path / "afile"
    afile.write_text("")
    assert "is a file, not a run directory" in refusal(
        capsys, ["train", "CartPole-v1", "--algo", "ppo", "--out", str(afile)])
    missing = tmp_path / "missing"
    assert "no such run directory" in refusal(capsys, ["evaluate", str(missing)])
    assert not missing.exists()
    config = tmp_path / "list.json"
    config.write_text("[1, 2]")
    assert "expected a table of settings" in refusal(
        capsys, ["train", "CartPole-v1", "--out", str(tmp_path / "c"), "--config", str(config)])
    assert "batches_per_request=2 needs runner 'ray'" in refusal(
        capsys, ["train", "CartPole-v1", "--out", str(tmp_path / "b"), "--batches-per-request",
                 "2"])
    assert "batches_per_request must be a positive int, got 0" in refusal(
        capsys, ["train", "CartPole-v1", "--algo", "impala", "--runner", "ray", "--out",
                 str(tmp_path / "b"), "--batches-per-request", "0"])


def test_graph_command_takes_a_file_path(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "cli.svg"
    cli.main(["graph", "examples/draw_graphs.py:agent_graph", "-o", str(out), "--depth", "1"])
    assert out.exists() and "wrote" in capsys.readouterr().out
    assert "expected MODULE:ATTRIBUTE or PATH.py:ATTRIBUTE" in refusal(
        capsys, ["graph", "examples/draw_graphs.py", "-o", str(out)])
    assert "no such file" in refusal(capsys, ["graph", "nowhere.py:graph", "-o", str(out)])


def test_the_resume_hint_of_an_interrupted_run_names_what_it_needs():
    """Issue 55: the hint printed on Ctrl-C left `--env-module` out (and a user's `--algo`),
    so it failed as printed."""
    from types import SimpleNamespace

    from components.training.cli import resume_command

    plain = SimpleNamespace(env_id="CartPole-v1", out="runs/x", algo="ppo", env_module=None)
    assert resume_command(plain) == "metagraph train CartPole-v1 --out runs/x --resume"
    users = SimpleNamespace(env_id="DeepSea-v0", out="my runs/x", algo="my_algo.py:Mine",
                            env_module="deep_sea.py")
    assert resume_command(users) == ("metagraph train DeepSea-v0 --out 'my runs/x' --resume "
                                     "--algo my_algo.py:Mine --env-module deep_sea.py")
