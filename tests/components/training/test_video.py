"""Watching a trained agent: frames drawn by Gymnasium's renderers from the native
environments' physical state are Gymnasium's own frames of the same episode (classic control
through pygame, MuJoCo through its offscreen EGL renderer), and `metagraph evaluate RUN
--video` writes them, in a fresh process."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from command_line import metagraph
from PIL import Image

pytest.importorskip("pygame")
from components.envs import make  # noqa: E402
from components.training.video import renderable, set_physics  # noqa: E402


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "HalfCheetah-v5"])
def test_frames_from_the_native_state_are_gymnasiums_own(env_id):
    native = make(env_id, 1, seed=3)
    native.reset(seed=3)
    own, drawn = renderable(env_id, 160, 120), renderable(env_id, 160, 120)
    own.reset(seed=0)
    drawn.reset(seed=0)
    try:
        set_physics(own, native.physical_state()[0], None)  # Gymnasium starts where we do
        native.single_action_space.seed(0)
        for _ in range(12):
            action = np.asarray([native.single_action_space.sample()])
            _, _, terminated, _, _ = native.step(action)
            own.step(action[0])
            if terminated[0]:  # the native pool has reset already; Gymnasium has not
                break
            set_physics(drawn, native.physical_state()[0], action[0])
            if hasattr(own.unwrapped, "model"):  # MuJoCo: Gymnasium's frame shows the
                import mujoco  # kinematics of its last substep's start; bring them up to date

                mujoco.mj_forward(own.unwrapped.model, own.unwrapped.data)
            expected, got = own.render().astype(int), drawn.render().astype(int)
            assert got.shape == expected.shape and got.std() > 0
            assert np.mean(np.abs(got - expected) > 8) < 0.01  # the same picture
    except Exception as error:  # no offscreen OpenGL here: say so rather than fail
        if "EGL" in type(error).__name__ or "gl" in str(error).lower()[:200]:
            pytest.skip(f"{env_id}: no offscreen renderer here ({error})")
        raise
    finally:
        own.close()
        drawn.close()
        native.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A directory holding `run`, a small PPO run that rendered videos while it trained."""
    directory = tmp_path_factory.mktemp("video")
    metagraph(directory, "train", "CartPole-v1", "--algo", "ppo", "--out", "run", "--steps",
              "256", "--set", "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]",
              "--set", "iterations_per_call=2", "--video-every", "100")
    return directory


def test_video_every_renders_episodes_beside_training(run):
    videos = sorted(p.name for p in (run / "run" / "videos").iterdir())
    suffix = ".mp4" if shutil.which("ffmpeg") else ".gif"
    assert videos == [f"steps_128{suffix}", f"steps_256{suffix}"]  # no exported policy left
    assert all((run / "run" / "videos" / name).stat().st_size > 1000 for name in videos)


def test_evaluate_writes_a_video_of_the_trained_policy(run):
    done = metagraph(run, "evaluate", "run", "--episodes", "1", "--video", "run.gif")
    assert "wrote run.gif" in done.stdout
    with Image.open(run / "run.gif") as gif:
        assert gif.n_frames >= 8 and gif.size == (600, 400)
    if shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None:
        pytest.skip("no ffmpeg program here (Debian: apt-get install ffmpeg) for .mp4")
    metagraph(run, "evaluate", "run", "--episodes", "1", "--video", "run.mp4")
    frames = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams",
                             "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                             str(run / "run.mp4")], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert int(frames) >= 8
