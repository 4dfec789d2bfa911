"""`EnvSpec`: what one environment is, made from its id and keyword arguments: Gymnasium's
spaces, the episode limit, and the compiled task object (engine/task.h) that the host pool and
the in-graph door step."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import numpy as np

from components.envs.engine.symmetry import symmetry_problems


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """An environment made with given keyword arguments.

    A spec pickles by its id and arguments (the task object is process-local): unpickling
    makes, or finds, the spec again from the catalogue (`catalogue.py`).

    Attributes:
        env_id: its id ("CartPole-v1"; without the `metagraph/` namespace).
        observation_space, action_space: one environment's Gymnasium spaces.
        max_episode_steps: episodes are truncated after this many steps.
        task: the compiled task object (None for a Gymnasium environment behind the host
            door): its sizes, its host pool class (`task.Pool`) and its XLA FFI handlers.
        kwargs: the keyword arguments it was made with, as sorted (name, value) items.
        physical_options: (reset option name, width) pairs whose values, concatenated, are
            the physical state (MuJoCo: qpos and qvel); `options={"state": ...}` works for every
            task.
        channels_first: the observations are images [C, H, W] (Atari's stacked frames), not
            [H, W, C] (MinAtar's planes): what a CNN reshapes them to.
        symmetries: for a game, transformations of its positions under which its rules are
            the same (`symmetry.Symmetry`: a board mirrored or turned), which a learner may
            train on (AlphaZero's `augment`); `symmetry.board_symmetries` makes a board's.
    """

    env_id: str
    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Space
    max_episode_steps: int
    task: Any = None
    kwargs: tuple = ()
    physical_options: tuple[tuple[str, int], ...] = ()
    channels_first: bool = False
    symmetries: tuple = ()

    @property
    def discrete(self) -> bool:
        """True if the action space is `Discrete`."""
        return isinstance(self.action_space, gymnasium.spaces.Discrete)

    def legal_mask_width(self) -> int:
        """The width of a legal-action mask, the number of actions; a TypeError for
        continuous actions, which have none."""
        if not self.discrete:
            raise TypeError(f"{self.env_id}: continuous actions have no legal mask")
        return int(self.action_space.n)

    @property
    def action_dtype(self) -> np.dtype:
        """The actions' dtype: int32 for discrete actions, float32 otherwise."""
        return np.dtype(np.int32) if self.discrete else np.dtype(np.float32)

    @property
    def action_shape(self) -> tuple[int, ...]:
        """One environment's action shape: () discrete, the Box's shape otherwise."""
        return () if self.discrete else tuple(self.action_space.shape)

    @property
    def graph_observation_dtype(self) -> np.dtype:
        """The observations' dtype inside a program (the functional doors, `Environment`):
        bool for a task with bool observations, uint8 for frames of pixels (Atari), float32
        otherwise."""
        dtype = np.dtype(self.observation_space.dtype)
        return dtype if dtype in (np.dtype(np.bool_), np.dtype(np.uint8)) \
            else np.dtype(np.float32)

    @property
    def physical_dim(self) -> int:
        """The length of the physical state users read and set (float64)."""
        return int(self.task.physical_dim)

    @property
    def record_words(self) -> int:
        """8-byte words of one environment's whole state: the task's words, the random
        stream and the step count (the rows of the in-graph state)."""
        return int(self.task.record_words)

    @property
    def extras_dim(self) -> int:
        """Extra numbers a step reports per environment (0: none)."""
        return int(self.task.extras_dim) if self.task is not None else 0

    @property
    def extras_names(self) -> tuple[str, ...]:
        """What each of a step's extras is, by name (a game: "player_to_move",
        "reward_player_0", ...)."""
        return tuple(self.task.extras_names) if self.task is not None else ()

    def extras_index(self, name: str) -> int:
        """The position of extra `name` in a step's extras (KeyError naming the task's
        extras when it has none of that name)."""
        names = self.extras_names
        if name not in names:
            raise KeyError(f"{self.env_id} has no extra named {name!r}; its extras: "
                           f"{list(names)}")
        return names.index(name)

    @property
    def num_players(self) -> int:
        """The players of a turn-based game (engine/task.h `num_players()`); 1 for a task
        that is no game."""
        return int(self.task.num_players) if self.task is not None else 1

    @property
    def planes(self) -> tuple[int, int, int] | None:
        """The observation as planes, (rows, columns, planes) channels last: the observation
        space's own shape where it has three axes (MinAtar's), else the rows, columns and
        planes its task's `info` declares (a board game, whose observation is these planes
        flattened); None for any other observation (a vector, Atari's channels-first frames:
        see `channels_first`)."""
        shape = tuple(int(d) for d in self.observation_space.shape)
        if len(shape) == 3 and not self.channels_first:
            return shape
        info = self.info
        if {"rows", "columns", "planes"} <= set(info):
            return int(info["rows"]), int(info["columns"]), int(info["planes"])
        return None

    @property
    def info(self) -> dict[str, Any]:
        """What the task says of itself beyond its sizes (MuJoCo: nq, nv, nu, dt, ...); empty
        for a family stepping in an engine of its own (no task)."""
        return dict(self.task.info) if self.task is not None else {}


MAX_GAME_PLIES = 2**16
"""The longest game a task may declare (`max_steps()`): Go's longest games are about 400
plies; a game without an end in reach would hang the playouts and matches."""


def check_spec(env_id: str, made: Any, own_engine: bool = False) -> EnvSpec:
    """`made`, a registered id's spec as its `make_spec` returned it, if it agrees with the
    task it holds; else a TypeError or ValueError naming what disagrees (a spec that said
    `Discrete(5)` for a 2-action task would have the pool step with the wrong actions). A
    family stepping in an engine of its own (`own_engine`: Atari) holds no task: its spec's
    id and spaces are checked."""
    where = f"register({env_id!r}): make_spec"
    if not isinstance(made, EnvSpec):
        raise TypeError(f"{where} returned {type(made).__name__}, expected an EnvSpec")
    if own_engine:
        if made.env_id != env_id or made.task is not None \
                or not isinstance(made.observation_space, gymnasium.spaces.Box):
            raise ValueError(f"{where} returned {made}: a family with an engine of its own "
                             f"makes specs of its env_id, a Box observation space, no task")
        return made
    task = made.task
    if task is None:
        raise ValueError(f"{where} returned a spec without a task (EnvSpec.task: the compiled "
                         f"task object, e.g. module.Task(env_id, kwargs))")
    problems = []
    if made.env_id != env_id:
        problems.append(f"its env_id is {made.env_id!r}, not {env_id!r} (make it with the "
                        f"env_id it is given)")
    space = made.observation_space
    shape = tuple(int(d) for d in task.obs_shape)
    dtypes = ((np.dtype(np.bool_),) if task.bool_observations
              else (np.dtype(np.float32), np.dtype(np.float64)))
    if not isinstance(space, gymnasium.spaces.Box) or space.shape != shape \
            or space.dtype not in dtypes:
        kind = "bool" if task.bool_observations else "float32 or float64"
        problems.append(f"the observation space is {space}, the task's observations are a "
                        f"Box of shape {shape}, {kind}")
    space = made.action_space
    if task.discrete:
        if not isinstance(space, gymnasium.spaces.Discrete) or int(space.n) != \
                task.num_actions or int(space.start) != 0:
            problems.append(f"the action space is {space}, the task's actions are "
                            f"Discrete({task.num_actions})")
    elif not isinstance(space, gymnasium.spaces.Box) or space.shape != (task.action_dim,):
        problems.append(f"the action space is {space}, the task's actions are a Box of shape "
                        f"({task.action_dim},)")
    problems += _game_problems(task)
    if made.symmetries != ():
        size = int(np.prod(shape))
        problems += symmetry_problems(made.symmetries, size, int(task.num_actions)) \
            if task.discrete else ["symmetries are declared for discrete actions only"]
    if int(task.num_players) > 1 and not 1 <= int(task.max_steps) <= MAX_GAME_PLIES:
        problems.append(f"a game's max_steps() (its plies at most) is {task.max_steps}; the "
                        f"searches, playouts and matches play every game to its end, so it "
                        f"must be in [1, {MAX_GAME_PLIES:,}]")
    if made.max_episode_steps != task.max_steps:
        problems.append(f"max_episode_steps is {made.max_episode_steps!r}, the task's "
                        f"max_steps() is {task.max_steps}")
    if problems:
        raise ValueError(f"{where} returned a spec that disagrees with its task: "
                         + "; ".join(problems))
    return made


def _game_problems(task: Any) -> list[str]:
    """What a task's extras and players get wrong for the engine's contract (task.h)."""
    names, players = tuple(task.extras_names), int(task.num_players)
    problems = []
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        problems.append(f"its extras_names() {list(names)} are not distinct non-empty names")
    if len(names) != int(task.extras_dim):
        problems.append(f"it names {len(names)} extras, its extras_dim() is {task.extras_dim}")
    if players < 1:
        problems.append(f"its num_players() is {players}, at least 1")
    elif players > 1:
        wanted = ["player_to_move", *(f"reward_player_{i}" for i in range(players))]
        missing = [n for n in wanted if n not in names]
        if missing:
            problems.append(f"a game of {players} players names {wanted} among its extras "
                            f"(task.h, num_players); missing: {missing}")
    return problems


def frozen(kwargs: dict[str, Any]) -> tuple:
    """Keyword arguments as a sorted, hashable tuple of items (lists become tuples)."""
    return tuple(sorted((name, tuple(value) if isinstance(value, list | np.ndarray) else value)
                        for name, value in kwargs.items()))


def physical_rows(spec: EnvSpec, state: Any, num_envs: int, what: str = "options['state']",
                  dim: int | None = None) -> np.ndarray:
    """A physical state (or `dim` of its columns), (dim,) for every environment or
    (num_envs, dim), float64 and finite, as the C-contiguous rows the pool reads."""
    if num_envs < 1:
        raise ValueError(f"{spec.env_id}: a physical state needs at least one environment, "
                         f"got {num_envs} (shape {np.shape(state)})")
    dim = spec.physical_dim if dim is None else dim
    arr = np.asarray(state)
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{spec.env_id}: {what} must be numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.shape == (dim,):
        arr = np.broadcast_to(arr, (num_envs, dim))
    if arr.shape != (num_envs, dim):
        raise ValueError(f"{spec.env_id}: {what} must have shape ({dim},) or ({num_envs}, "
                         f"{dim}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{spec.env_id}: {what} must be finite")
    return np.ascontiguousarray(arr)
