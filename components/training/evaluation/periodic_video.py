"""Videos while training (`--video-every N`): after each call that passes a multiple of N
environment steps, the policy as it stands (the first seed's) is exported and an episode of it
rendered in a process of its own (`video.py`), beside training, into
`DIR/videos/steps_<steps>.mp4` (`.gif` without ffmpeg). Rendering reads the state and never
changes it."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import jax
import numpy as np

from backends.xla.export import export_api
from components.envs.wrappers import host_wrappers, outermost_wrapper
from metagraph.graph import MetaGraph
from metagraph.spaces import BATCH


class VideoRecorder:
    """Starts a video of `graph`'s acting API `api` after the calls whose rows pass the next
    multiple of `every` steps (counted on from the rows `kept` from before a resume)."""

    def __init__(self, run_path: Path, graph: MetaGraph, env_id: str, door: str, every: int,
                 kept: list[dict[str, Any]], api: str = "greedy",
                 env_kwargs: dict[str, Any] | None = None):
        self.videos, self.graph, self.api = Path(run_path) / "videos", graph, api
        self.env_id, self.door, self.every = env_id, door, every
        self.env_kwargs = dict(env_kwargs or {})
        done = kept[-1]["env_steps"] if kept else 0
        self.next_at = (done // every + 1) * every
        self.rendering: list[subprocess.Popen] = []
        self.host = host_wrappers(outermost_wrapper(graph.root))

    def after_call(self, exe: Any, rows: list[dict[str, Any]]) -> None:
        """Start rendering when `rows` pass the next multiple of `every` steps."""
        steps = rows[-1]["env_steps"]
        if steps < self.next_at:
            return
        self.next_at = (steps // self.every + 1) * self.every
        self.videos.mkdir(exist_ok=True)
        state = exe.state if exe.seeds is None else jax.tree.map(lambda x: x[0], exe.state)
        obs = self.graph.apis[self.api].inputs["observation"]
        inputs = [jax.ShapeDtypeStruct((BATCH, *obs.shape[1:]), np.float32)]
        policy = self.videos / f".steps_{steps}.mgx"
        policy.write_bytes(export_api(self.graph, self.api, state, inputs=inputs))
        from components.training.evaluation.video import can_write_mp4

        suffix = ".mp4" if can_write_mp4() else ".gif"
        command = [sys.executable, "-m", "components.training.evaluation.video", str(policy),
                   self.env_id, self.door, str(self.videos / f"steps_{steps}{suffix}"),
                   json.dumps(self.env_kwargs)]
        if self.host:  # a frame stack's history, kept by the renderer
            host = self.videos / f".steps_{steps}.host.pkl"
            host.write_bytes(pickle.dumps(self.host))
            command.append(str(host))
        self.rendering.append(subprocess.Popen(command, stdin=subprocess.DEVNULL))

    def close(self) -> None:
        """Wait for the videos being rendered."""
        for process in self.rendering:
            process.wait()


__all__ = ["VideoRecorder"]
