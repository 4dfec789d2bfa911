"""Watching a trained agent: frames drawn by Gymnasium's renderers from the native
environments' physical state are Gymnasium's own frames of the same episode (classic control
through pygame, MuJoCo through its offscreen EGL renderer), and `metagraph evaluate RUN
--video` writes them, in a fresh process."""

from __future__ import annotations

import contextlib
import re
import subprocess

import numpy as np
import pytest
from command_line import metagraph
from PIL import Image

pytest.importorskip("pygame")
from components.envs import make  # noqa: E402
from components.training.evaluation.video import (  # noqa: E402
    can_write_mp4,
    ffmpeg_program,
    renderable,
    set_physics,
)


@contextlib.contextmanager
def rendering(env_id, *envs):
    """Close `envs` at the end; where offscreen OpenGL is missing, skip the test saying so."""
    try:
        yield
    except Exception as error:
        if "EGL" in type(error).__name__ or "gl" in str(error).lower()[:200]:
            pytest.skip(f"{env_id}: no offscreen renderer here ({error})")
        raise
    finally:
        for env in envs:
            env.close()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "HalfCheetah-v5"])
def test_frames_from_the_native_state_are_gymnasiums_own(env_id):
    native = make(env_id, 1, seed=3)
    native.reset(seed=3)
    own, drawn = renderable(env_id, 160, 120), renderable(env_id, 160, 120)
    own.reset(seed=0)
    drawn.reset(seed=0)
    with rendering(env_id, own, drawn, native):
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


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A directory holding `run`, a small PPO run that rendered videos while it trained, on
    stacks of 2 observations and each action taken twice (the renderers act so too: the
    policy takes only stacks)."""
    directory = tmp_path_factory.mktemp("video")
    metagraph(directory, "train", "CartPole-v1", "--algo", "ppo", "--out", "run", "--steps",
              "256", "--set", "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]",
              "--set", "iterations_per_call=2", "--set", "frame_stack=2", "--set",
              "action_repeat=2", "--video-every", "100")
    return directory


def test_video_every_renders_episodes_beside_training(run):
    videos = sorted(p.name for p in (run / "run" / "videos").iterdir())
    suffix = ".mp4" if can_write_mp4() else ".gif"
    assert videos == [f"steps_128{suffix}", f"steps_256{suffix}"]  # no policy, no pickle left
    assert all((run / "run" / "videos" / name).stat().st_size > 1000 for name in videos)


def test_evaluate_writes_a_video_of_the_trained_policy(run):
    done = metagraph(run, "evaluate", "run", "--episodes", "1", "--video", "run.gif")
    assert "wrote run.gif" in done.stdout
    with Image.open(run / "run.gif") as gif:
        assert gif.n_frames >= 4 and gif.size == (600, 400)  # (a frame every 2 steps)
    if not can_write_mp4():
        pytest.skip("no ffmpeg here (pip install -e \".[video]\" ships one) for .mp4")
    metagraph(run, "evaluate", "run", "--episodes", "1", "--video", "run.MP4")
    # the frames counted by the same ffmpeg decoding the file (no ffprobe needed)
    decoded = subprocess.run([ffmpeg_program(), "-hide_banner", "-nostdin", "-i",
                              str(run / "run.MP4"), "-map", "0:v:0", "-f", "null", "-"],
                             capture_output=True, text=True)
    assert decoded.returncode == 0, decoded.stderr
    assert int(re.findall(r"frame=\s*(\d+)", decoded.stderr)[-1]) >= 4


def test_a_renderer_missing_its_dependencies_is_one_line_naming_what_to_install():
    import gymnasium

    from components.training.evaluation.video import VideoError, check_renders

    class NoPygame:
        def render(self):
            raise gymnasium.error.DependencyNotInstalled("pygame is not installed")

    class NoOpenGL:
        def render(self):
            raise RuntimeError("cannot initialize EGL")

    with pytest.raises(VideoError, match=r'CartPole-v1: .*pip install -e "\.\[video\]"'):
        check_renders(NoPygame(), "CartPole-v1")
    with pytest.raises(VideoError, match=r"HalfCheetah-v5: MuJoCo cannot render offscreen .*"
                                         r"cannot initialize EGL.*libegl-mesa0"):
        check_renders(NoOpenGL(), "HalfCheetah-v5")
    with pytest.raises(RuntimeError, match="cannot initialize EGL"):  # not ours to rename
        check_renders(NoOpenGL(), "CartPole-v1")


def test_the_mujoco_camera_follows_the_body_frame_by_frame():
    """A running cheetah stays in the picture: every frame's camera is MuJoCo's tracking
    camera looking at the tracked body where it is, 30 m down the track as at the start."""
    import mujoco

    shown = renderable("HalfCheetah-v5", 96, 72)
    shown.reset(seed=0)
    model, data = shown.unwrapped.model, shown.unwrapped.data
    with rendering("HalfCheetah-v5", shown):
        for x in (0.0, 5.0, 30.0):
            physics = np.concatenate([data.qpos, data.qvel])
            physics[0] = x  # the root's position along the track
            set_physics(shown, physics, None)
            mujoco.mj_forward(model, data)
            frame = shown.render()
            camera = shown.unwrapped.mujoco_renderer.viewer.cam
            assert camera.type == mujoco.mjtCamera.mjCAMERA_TRACKING
            np.testing.assert_allclose(camera.lookat, data.subtree_com[camera.trackbodyid],
                                       atol=1e-6)
            assert frame.std() > 0
