"""The Atari 2600 games `ale-py` ships, by id, and what one environment of them is: its
keyword arguments (EnvPool's names and defaults, Gymnasium's v5 sticky actions) and its spec.

Nothing here imports `ale_py` until a spec is made: the games are the ROMs inside the
installed wheel, found on disk, so `import components.envs` stays quick with or without the
`atari` extra."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from components.envs.engine.spec import EnvSpec
from metagraph.suggestions import did_you_mean

VERSION = "v5"


@dataclasses.dataclass(frozen=True)
class AtariOptions:
    """One Atari environment's keyword arguments, EnvPool's names and defaults (but sticky
    actions at Gymnasium's v5 probability, 0.25, as `ALE/Pong-v5`).

    Attributes:
        img_height, img_width: the observed frame's size after resizing (84 x 84).
        stack_num: the frames stacked in one observation (4).
        gray_scale: grayscale frames (True); False: RGB, the observation [stack, H, W, 3].
        frame_skip: emulator frames per step, the action repeated (4); the last two frames are
            max-pooled.
        noop_max: a new game starts after up to this many no-op steps, drawn uniformly (30).
        episodic_life: a lost life ends the episode for learning (`terminated`) while the game
            goes on; the game's own end is `info["terminated"]` (False).
        reward_clip: rewards clipped to their sign (False); the raw reward is `info["reward"]`.
        repeat_action_probability: sticky actions, the previous action repeated with this
            probability each frame (0.25).
        full_action_space: all 18 actions rather than the game's minimal set (False).
        use_fire_reset: press FIRE after a reset in the games that need it (True).
        max_episode_steps: a game is truncated after this many steps (27,000 = 108,000
            frames).
    """

    img_height: int = 84
    img_width: int = 84
    stack_num: int = 4
    gray_scale: bool = True
    frame_skip: int = 4
    noop_max: int = 30
    episodic_life: bool = False
    reward_clip: bool = False
    repeat_action_probability: float = 0.25
    full_action_space: bool = False
    use_fire_reset: bool = True
    max_episode_steps: int = 27_000

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """One environment's observation: [stack, H, W] grayscale, [stack, H, W, 3] RGB."""
        shape = (self.stack_num, self.img_height, self.img_width)
        return shape if self.gray_scale else (*shape, 3)


def options_from(env_id: str, kwargs: dict[str, Any]) -> AtariOptions:
    """`kwargs` checked and completed with the defaults: a TypeError for an unknown name or a
    value of the wrong type, a ValueError for one out of range, each naming the id."""
    fields = {f.name: f for f in dataclasses.fields(AtariOptions)}
    for name in kwargs:
        if name not in fields:
            raise TypeError(f"{env_id}: unknown keyword argument {name!r}"
                            f"{did_you_mean(name, fields)}; an Atari game takes "
                            f"{sorted(fields)}")
    values = {}
    for name, value in kwargs.items():
        kind = type(fields[name].default)
        if kind is bool:
            ok = isinstance(value, bool | np.bool_)
        elif kind is int:
            ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
        else:
            ok = isinstance(value, int | float | np.integer | np.floating) \
                and not isinstance(value, bool)
        if not ok:
            raise TypeError(f"{env_id}: {name} must be {kind.__name__}, got "
                            f"{type(value).__name__} {value!r}")
        values[name] = kind(value)
    options = AtariOptions(**values)
    for name in ("img_height", "img_width", "stack_num", "frame_skip", "max_episode_steps"):
        if getattr(options, name) < 1:
            raise ValueError(f"{env_id}: {name} must be at least 1, got "
                             f"{getattr(options, name)}")
    if options.noop_max < 0:
        raise ValueError(f"{env_id}: noop_max must be at least 0, got {options.noop_max}")
    if not 0.0 <= options.repeat_action_probability <= 1.0:
        raise ValueError(f"{env_id}: repeat_action_probability must be in [0, 1], got "
                         f"{options.repeat_action_probability}")
    if options.max_episode_steps * options.frame_skip >= 2**31:
        raise ValueError(f"{env_id}: max_episode_steps x frame_skip must be under 2**31 "
                         f"frames, got {options.max_episode_steps} x {options.frame_skip}")
    return options


def rom_directory() -> Path | None:
    """Where the installed `ale-py` keeps its ROMs, or None without it (found without
    importing it)."""
    try:
        found = importlib.util.find_spec("ale_py")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations))) / "roms"


def game_name(rom: str) -> str:
    """A ROM's game name as ale-py and EnvPool write it in ids: "ms_pacman" -> "MsPacman"."""
    return rom.title().replace("_", "")


def roms() -> dict[str, str]:
    """Every game the installed ale-py ships: {"Pong-v5": "pong", ...}; empty without it."""
    directory = rom_directory()
    if directory is None or not directory.is_dir():
        return {}
    return {f"{game_name(path.stem)}-{VERSION}": path.stem
            for path in sorted(directory.glob("*.bin"))}


def action_count(rom: str, full_action_space: bool) -> int:
    """The game's actions: its minimal set, or all 18."""
    if full_action_space:
        return 18
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # (no banner)
    ale = ale_py.ALEInterface()
    ale.loadROM(ale_py.roms.get_rom_path(rom))
    return len(ale.getMinimalActionSet())


def make_spec(env_id: str, kwargs: dict[str, Any]) -> EnvSpec:
    """The spec of Atari id `env_id` with keyword arguments `kwargs` (`AtariOptions`): uint8
    observations [stack, H, W] (RGB: [stack, H, W, 3]), the game's actions; no compiled task
    (ale-py's engine steps it, `AtariVectorEnv`)."""
    options = options_from(env_id, kwargs)
    rom = roms()[env_id]
    observations = gymnasium.spaces.Box(0, 255, options.observation_shape, np.uint8)
    actions = gymnasium.spaces.Discrete(action_count(rom, options.full_action_space))
    return EnvSpec(env_id, observations, actions, options.max_episode_steps,
                   channels_first=options.gray_scale)


__all__ = ["AtariOptions", "VERSION", "action_count", "game_name", "make_spec",
           "options_from", "rom_directory", "roms"]
