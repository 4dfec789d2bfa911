"""Watching a trained agent: `metagraph evaluate RUN --video out.mp4`.

The agent acts on the native environments (the host pool, as `evaluate` does); after each
step the pool's physical state (`physical_state()`, Gymnasium's layout) is set into
Gymnasium's own environment of the same task, whose renderer draws the frame: classic
control through Gymnasium's pygame renderers (the `video` extra), MuJoCo through MuJoCo's
offscreen renderer, headless through EGL (Mesa's `libegl-mesa0` from Debian; `MUJOCO_GL`
chooses another, e.g. `osmesa` with `libosmesa6`). A run of the "gymnasium" door renders
Gymnasium's environment directly.

Frames go to `.mp4` through ffmpeg (the one the `video` extra's `imageio-ffmpeg` wheel
ships, else the system's) or to `.gif` through Pillow. During training, `--video-every N`
renders one episode of the policy after each call that passes a multiple of N steps, into
`DIR/videos/steps_<N>.mp4` (`.gif` without ffmpeg): the policy is exported (`.mgx`) and a
process of its own (`main`) renders it while training goes on.

    record_video(load("runs/cheetah"), "cheetah.mp4", episodes=1)
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from backends.xla import load as load_exported
from components.envs import make
from components.envs.engine.catalogue import scored_kwargs, spec
from components.envs.wrappers import host_wrappers, outermost_wrapper
from components.training.algorithm import env_kwargs_of
from components.training.evaluation.loading import TrainedAgent
from metagraph.install_hints import install_hint

FPS = 30
TRACKING = {"type": 1, "trackbodyid": 1, "distance": 4.0, "elevation": -15.0}
"""MuJoCo's camera: tracking the task's first body (type 1: mjCAMERA_TRACKING), so a runner stays in
the frame (Gymnasium's own free camera lets it run out)."""
MUJOCO = ("HalfCheetah", "Hopper", "Walker2d", "Ant", "Humanoid", "HumanoidStandup",
          "Swimmer", "Reacher", "Pusher", "InvertedPendulum", "InvertedDoublePendulum")


class VideoError(ValueError):
    """A video that cannot be made here (no renderer, no encoder); the message says what to
    install."""


def renderable(env_id: str, width: int, height: int,
               env_kwargs: dict[str, Any] | None = None) -> Any:
    """Gymnasium's environment of `env_id` (made with `env_kwargs`) with
    `render_mode="rgb_array"`; MuJoCo tasks render offscreen through EGL unless `MUJOCO_GL`
    says otherwise (or a display exists)."""
    if not os.environ.get("DISPLAY"):  # headless: offscreen everywhere
        for name, value in (("MUJOCO_GL", "egl"), ("SDL_VIDEODRIVER", "dummy"),
                            ("SDL_AUDIODRIVER", "dummy")):
            os.environ.setdefault(name, value)
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    kwargs = {"width": width, "height": height, "default_camera_config": TRACKING} \
        if env_id.split("-")[0] in MUJOCO else {}
    kwargs.update(env_kwargs or {})
    try:
        shown = gymnasium.make(env_id, render_mode="rgb_array", **kwargs)
    except gymnasium.error.DependencyNotInstalled as error:
        raise VideoError(f"{env_id}: Gymnasium cannot render it here ({error}); install the "
                         f"video extra: {install_hint('video')}") from None
    renderer = getattr(shown.unwrapped, "mujoco_renderer", None)
    if renderer is not None and "default_camera_config" in kwargs:
        # Gymnasium (1.4) renders with camera_id -1 when the task has no camera of its own,
        # which turns the camera back into a free one before every frame: no camera id keeps
        # TRACKING's (the camera follows the body)
        renderer.camera_id = None
    return shown


def check_renders(shown: Any, env_id: str) -> None:
    """Draw one frame of `shown` (reset), or a VideoError naming what to install: Gymnasium's
    renderer finds its dependencies only when it first draws (pygame: the `video` extra;
    MuJoCo's offscreen OpenGL: Debian's EGL or OSMesa)."""
    try:
        shown.render()
    except gymnasium.error.DependencyNotInstalled as error:
        raise VideoError(f"{env_id}: Gymnasium cannot render it here ({error}); install the "
                         f"video extra: {install_hint('video')}") from None
    except Exception as error:  # MuJoCo's or OpenGL's own error types
        if env_id.split("-")[0] not in MUJOCO:
            raise
        backend = os.environ.get("MUJOCO_GL", "egl")
        raise VideoError(f"{env_id}: MuJoCo cannot render offscreen with MUJOCO_GL={backend} "
                         f"({type(error).__name__}: {str(error)[:200]}); install Debian's "
                         f"libegl-mesa0 (MUJOCO_GL=egl) or libosmesa6 (MUJOCO_GL=osmesa)"
                         ) from None


def set_physics(env: Any, physics: np.ndarray, action: Any) -> None:
    """Put Gymnasium's environment `env` in the physical state `physics` (Gymnasium's
    layout: MuJoCo's positions then velocities, or a classic-control task's `state`)."""
    inner = env.unwrapped
    if hasattr(inner, "set_state") and hasattr(inner, "model"):  # MuJoCo
        nq = inner.model.nq
        inner.set_state(physics[:nq], physics[nq:])
    else:
        inner.state = np.array(physics, dtype=np.asarray(inner.state).dtype) \
            if getattr(inner, "state", None) is not None else np.array(physics)
        if hasattr(inner, "last_u"):  # Pendulum draws the torque it was given
            inner.last_u = float(np.ravel(action)[0]) if action is not None else None


def frames(act: Callable[[np.ndarray], Any], env_id: str, door: str = "native",
           episodes: int = 1, seed: int = 0, width: int = 480, height: int = 360,
           env_kwargs: dict[str, Any] | None = None,
           host: Sequence[Callable[[Any], Any]] = ()) -> list[np.ndarray]:
    """The frames of `episodes` whole episodes of `act` (observations [1, ...] -> actions
    [1, ...]) on task `env_id` made with `env_kwargs` behind `door` (see the module
    docstring). A task whose state cannot be set in a renderer (Atari: ale-py's engine
    keeps it) shows the frames its agent sees (`seen_frames`). `host`: what the task's
    environment is wrapped in for `act` (`components.envs.wrappers.host_wrappers`: a frame
    stack's history); the "gymnasium" door's renders take none (a VideoError)."""
    kwargs = scored_kwargs(env_id, env_kwargs or {})
    if door != "gymnasium" and spec(env_id, **kwargs).task is None:
        return seen_frames(act, env_id, episodes, seed, height, kwargs, host)
    if door == "gymnasium" and host:
        raise VideoError(f"{env_id}: a video of the gymnasium door renders Gymnasium's own "
                         f"environment, which keeps no frame stack for the agent; render a "
                         f"run of the native or host door")
    shown = renderable(env_id, width, height, env_kwargs)
    shown.reset(seed=seed)
    found = []
    try:
        check_renders(shown, env_id)
        if door == "gymnasium":
            obs, _ = shown.reset(seed=seed)
            for _ in range(episodes):
                done = False
                while not done:
                    found.append(shown.render())
                    action = np.asarray(act(np.asarray(obs)[None]))[0]
                    obs, _, terminated, truncated, _ = shown.step(action)
                    done = terminated or truncated
                obs, _ = shown.reset()
            return found
        env = wrapped_in(make(env_id, 1, seed=seed, **kwargs), host)
        obs, _ = env.reset(seed=seed)
        action = None
        for _ in range(episodes):
            done = False
            while not done:
                set_physics(shown, env.physical_state()[0], action)
                found.append(shown.render())
                action = np.asarray(act(obs))
                obs, _, terminated, truncated, _ = env.step(action)
                action = action[0]
                done = bool(terminated[0] or truncated[0])
        env.close()
    finally:
        shown.close()
    return found


def seen_frames(act: Callable[[np.ndarray], Any], env_id: str, episodes: int, seed: int,
                height: int, env_kwargs: dict[str, Any],
                host: Sequence[Callable[[Any], Any]] = ()) -> list[np.ndarray]:
    """The frames of `episodes` episodes as the agent sees them: each observation's newest
    frame (an Atari stack's last, 84 x 84 grayscale), enlarged to about `height` rows by
    repeating pixels, as RGB (`host`: as `frames`)."""
    env = wrapped_in(make(env_id, 1, seed=seed, **env_kwargs), host)
    found = []
    try:
        obs, _ = env.reset(seed=seed)
        for _ in range(episodes):
            done = False
            while not done:
                frame = np.asarray(obs[0][-1], np.uint8)
                scale = max(1, height // frame.shape[0])
                frame = frame.repeat(scale, 0).repeat(scale, 1)
                found.append(np.stack([frame] * 3, -1) if frame.ndim == 2 else frame)
                obs, _, terminated, truncated, _ = env.step(
                    np.asarray(act(obs)))
                done = bool(terminated[0] or truncated[0])
    finally:
        env.close()
    return found


def wrapped_in(env: Any, host: Sequence[Callable[[Any], Any]]) -> Any:
    """`env` in each of `host`'s wrappers, the innermost first."""
    for wrap in host:
        env = wrap(env)
    return env


def ffmpeg_program() -> str:
    """The ffmpeg that writes .mp4: the one the `video` extra's `imageio-ffmpeg` wheel ships
    (with libx264), else the system's; a VideoError saying what to install if neither."""
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        found = shutil.which("ffmpeg")
        if found is None:
            raise VideoError(f"writing .mp4 needs ffmpeg: {install_hint('video')} (its "
                             "imageio-ffmpeg wheel ships one), or Debian's apt-get install "
                             "ffmpeg; or write a .gif") from None
        return found


def can_write_mp4() -> bool:
    """Whether an ffmpeg is here for .mp4 (`ffmpeg_program`)."""
    try:
        ffmpeg_program()
    except VideoError:
        return False
    return True


def write_video(images: list[np.ndarray], path: str | Path, fps: int = FPS) -> Path:
    """Write RGB frames to `path`: `.mp4` (H.264 through ffmpeg, `ffmpeg_program`) or `.gif`
    (Pillow); the suffix in any case."""
    path = Path(path)
    if not images:
        raise VideoError(f"{path}: no frames to write")
    suffix = path.suffix.lower()  # clip.MP4 is an .mp4
    if suffix == ".gif":
        from PIL import Image

        first, *rest = [Image.fromarray(image) for image in images]
        first.save(path, save_all=True, append_images=rest, duration=1000 // fps, loop=0)
        return path
    if suffix != ".mp4":
        raise VideoError(f"{path}: a video is .mp4 or .gif")
    ffmpeg = ffmpeg_program()
    height, width = images[0].shape[:2]
    command = [ffmpeg, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{width}x{height}", "-r", str(fps), "-i", "-", "-an", "-c:v",
               "libx264", "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
               str(path)]
    done = subprocess.run(command, input=b"".join(np.ascontiguousarray(image, np.uint8)
                                                  .tobytes() for image in images),
                          capture_output=True, timeout=600)
    if done.returncode != 0:
        raise VideoError(f"ffmpeg could not write {path}: {done.stderr.decode()[-300:]}")
    return path


def record_video(agent: TrainedAgent, path: str | Path, episodes: int = 1, seed: int = 0,
                 deterministic: bool = True, width: int = 480, height: int = 360) -> Path:
    """Render `episodes` episodes of `agent` (`load(run)`) into the video `path` (.mp4 or
    .gif); returns it."""
    door = agent.algorithm.door(agent.config)
    return write_video(frames(lambda obs: agent.predict(obs, deterministic), agent.env_id,
                              door, episodes, seed, width, height,
                              env_kwargs_of(agent.config),
                              host_wrappers(outermost_wrapper(agent.graph.root))), path)


def main(argv: list[str] | None = None) -> None:
    """`python -m components.training.evaluation.video POLICY.mgx ENV_ID DOOR OUT
    [ENV_KWARGS_JSON [HOST.pkl]]`: a video of an exported policy (what `--video-every` runs
    beside training, in a process of its own); HOST.pkl, written by that run beside the
    policy, the pickled `host` of `frames` (a frame stack's)."""
    policy, env_id, door, out, *rest = sys.argv[1:] if argv is None else argv
    loaded = load_exported(policy)
    host = []
    if len(rest) > 1:
        host = pickle.loads(Path(rest[1]).read_bytes())
        Path(rest[1]).unlink()
    write_video(frames(lambda obs: loaded(obs), env_id, door,
                       env_kwargs=json.loads(rest[0]) if rest else None, host=host), out)
    Path(policy).unlink()


if __name__ == "__main__":
    main()
