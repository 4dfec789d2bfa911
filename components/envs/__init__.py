"""Environments: one engine (`components.envs.engine`) and its families, classic control
(`components.envs.classic_control`), Gymnasium's MuJoCo v5 tasks (`components.envs.mujoco`),
MinAtar's five games (`components.envs.minatar`), two-player board games
(`components.envs.games`: Connect Four, Othello, Hex) and the Atari 2600 games of ale-py
(`components.envs.atari`, the `atari` extra: `Pong-v5`, `ALE/Pong-v5`, host door), plus any a
user registers (`register`, `build_extension`).

- `make(env_id, num_envs, seed=..., num_threads=...)`: the host loop, a
  `gymnasium.vector.VectorEnv` (`VectorEnv`) stepped by C++ threads (by default every core the
  process may run on, capped at `num_envs`); with `batch_size=B`, the asynchronous pool
  (`AsyncVectorEnv`: EnvPool's `async_reset`, `recv`, `send`), stepping groups of B while the
  caller runs its policy for others.
- `gymnasium.make("metagraph/CartPole-v1")`, `gymnasium.make_vec("metagraph/CartPole-v1", n)`:
  every registered id.
- `make_functional(env_id, door="native" | "jax")`: pure reset/step for jit, scan and vmap,
  through the XLA FFI (`InGraphEnv`) or the family's pure-JAX twin; a step is a `StepResult`.
- `Environment(env_id, num_envs, door=...)`: any of the doors ("native", "jax", "host",
  "gymnasium") as a meta-graph component, its observations in the task's shape and dtype
  (MinAtar's bool planes [10, 10, C]); `components.envs.wrappers` transform it with the same
  API (`FlattenObservation`: vectors for an MLP; `observation_vectors` makes a host pool's
  observations the same vectors).
- `check(env_id)`: the engine's conformance check of an environment, every door.
- `spec(env_id, **kwargs)`, `env_ids()`, `canonical_id(env_id)`, `register(...)`,
  `observation_shape(env_id)` (its spec's `planes`: those of a flat observation, where its
  task reports them),
  `num_players(env_id)` (2 or more: a turn-based game, as its task declares, engine/task.h),
  `openspiel_name(env_id)` (a game's OpenSpiel twin, as its registration names it).
- `build_extension("my_task.h", "ns::MyTask")`: your own C++ task, built against the engine
  (docs/your-own-environment.md).
- `Symmetry`, `board_symmetries(rows, columns, planes, names, ...)`: a game's symmetries, which
  its spec declares (`EnvSpec(..., symmetries=...)`) and AlphaZero's `augment` learns under.
"""

from __future__ import annotations

from typing import Any

import components.envs.classic_control
import components.envs.games
import components.envs.minatar
import components.envs.mujoco  # noqa: F401  (registers the MuJoCo ids; loads nothing compiled)
from components.envs.atari import ATARI_IDS, register_games
from components.envs.classic_control import TASKS as CLASSIC_CONTROL_IDS
from components.envs.classic_control.twin import TwinFunctionalEnv, TwinState
from components.envs.engine import catalogue
from components.envs.engine.async_vector_env import AsyncVectorEnv
from components.envs.engine.catalogue import (
    canonical_id,
    env_ids,
    num_players,
    observation_shape,
    openspiel_name,
    register,
    spec,
)
from components.envs.engine.conformance import ConformanceError, check
from components.envs.engine.extension import (
    ExtensionBuildError,
    ExtensionImportError,
    build_extension,
)
from components.envs.engine.functional import FunctionalEnv
from components.envs.engine.in_graph import InGraphEnv
from components.envs.engine.make import make
from components.envs.engine.single_env import Env
from components.envs.engine.spec import EnvSpec
from components.envs.engine.step_result import PlayoutResult, StepResult
from components.envs.engine.symmetry import Symmetry, board_symmetries
from components.envs.engine.vector_env import VectorEnv
from components.envs.environment import DOORS, Environment, observation_vectors
from components.envs.functional_doors import make_functional
from components.envs.games import GAME_IDS
from components.envs.minatar import MINATAR_IDS
from components.envs.mujoco import MUJOCO_IDS

register_games()  # (last: 108 games after the other families)
catalogue.seal_built_ins()  # the families above registered the library's own ids
ENV_IDS = tuple(CLASSIC_CONTROL_IDS)  # the classic-control ids; env_ids() lists every id

# Old spellings, refused naming the new ones ("native" names one thing: the in-graph door).
_RENAMED = {
    "NativeVectorEnv": "VectorEnv", "NativeEnv": "Env", "native_id": "canonical_id",
    "NativeFunctionalEnv": "InGraphEnv", "MujocoVectorEnv": "VectorEnv",
    "MujocoFunctionalEnv": "InGraphEnv", "register_ffi_targets": "make_functional (it "
    "registers the targets it needs)",
}


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        raise AttributeError(f"components.envs.{name} is now components.envs.{_RENAMED[name]}")
    raise AttributeError(f"module 'components.envs' has no attribute {name!r}")


__all__ = [
    "ATARI_IDS", "AsyncVectorEnv", "DOORS", "ENV_IDS", "GAME_IDS", "MINATAR_IDS", "MUJOCO_IDS",
    "ConformanceError", "Env", "EnvSpec", "Environment", "ExtensionBuildError", "Symmetry",
    "ExtensionImportError", "FunctionalEnv", "InGraphEnv", "PlayoutResult", "StepResult",
    "TwinFunctionalEnv", "TwinState",
    "VectorEnv", "board_symmetries", "build_extension",
    "canonical_id", "check", "env_ids", "make", "make_functional", "num_players",
    "observation_shape", "openspiel_name",
    "observation_vectors", "register", "spec",
]
