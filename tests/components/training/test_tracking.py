"""`metagraph train --track` (issue 24 part 6): the run's scalars, config and curve go to
Weights & Biases, in its offline mode here, from the run's reporting process."""

from __future__ import annotations

import os

import pytest
from command_line import metagraph

pytest.importorskip("wandb")


def test_track_logs_scalars_config_and_curve_to_wandb_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))  # nothing outside the test's directory
    metagraph(tmp_path, "train", "CartPole-v1", "--algo", "ppo", "--out", "run", "--steps",
              "128", "--set", "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]",
              "--set", "iterations_per_call=2", "--eval-every", "64", "--eval-episodes", "2",
              "--track", "--wandb-project", "tests")
    runs = list((tmp_path / "run" / "wandb").glob("offline-run-*"))
    assert len(runs) == 1, os.listdir(tmp_path / "run")
    records = next(runs[0].glob("run-*.wandb")).read_bytes()
    for logged in (b"episode_return_mean", b"eval_return_mean", b"loss", b"CartPole-v1"):
        assert logged in records, logged  # each row's scalars and config.json's entries
    assert list((runs[0] / "files" / "media" / "images").glob("curve_*.png"))
    assert (tmp_path / "run" / "curve.png").is_file()  # and everything as without --track


def test_track_without_a_key_is_refused_in_one_line_before_training(tmp_path, monkeypatch,
                                                                    capsys):
    from command_line import refusal

    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))  # no `wandb login` entry
    monkeypatch.chdir(tmp_path)
    said = refusal(capsys, ["train", "CartPole-v1", "--algo", "ppo", "--out", "run",
                            "--steps", "64", "--track"])
    assert "--track (the run's W&B project 'metagraph'): no Weights & Biases key for " \
           "api.wandb.ai: run `wandb login` or set WANDB_API_KEY" in said, said
    assert not (tmp_path / "run").exists()  # nothing written
    (tmp_path / "netrc").write_text("machine api.wandb.ai login user password KEY\n")
    os.chmod(tmp_path / "netrc", 0o600)
    from components.training.reporting.wandb_log import login_refusal

    assert login_refusal() is None  # `wandb login`'s entry found
