"""bsuite's Catch on metagraph's environment engine: `catch.h` is the task, this file its id
and spaces. Importing it builds the header (once; cached by its contents) and registers
"Catch-v0", which then works everywhere an environment does:

    import catch_env  # this file, from wherever it lives
    import components.envs as envs

    pool = envs.make("Catch-v0", 64)                 # host pool, C++ threads
    door = envs.make_functional("Catch-v0")          # in-graph, through the XLA FFI
    envs.check("Catch-v0")                           # the engine's conformance check
    gymnasium.make("metagraph/Catch-v0", rows=8)     # keyword arguments reach the task
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium
import numpy as np

import components.envs as envs

HERE = os.path.dirname(os.path.abspath(__file__))
compiled = envs.build_extension(os.path.join(HERE, "catch.h"), "catch_env::Catch", "Catch")


def make_spec(env_id: str, kwargs: dict[str, Any]) -> envs.EnvSpec:
    """The spec of Catch made with `rows` and `columns` (bsuite's defaults 10 and 5)."""
    task = compiled.Catch(env_id, kwargs)
    observations = gymnasium.spaces.Box(0.0, 1.0, (task.obs_dim,), np.float32)
    return envs.EnvSpec(env_id, observations, gymnasium.spaces.Discrete(3),
                        int(task.max_steps), task)


envs.register("Catch-v0", make_spec)
