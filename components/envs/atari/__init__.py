"""Atari 2600 through the Arcade Learning Environment: every game the installed `ale-py` ships
(the `atari` extra), under EnvPool's ids (`Pong-v5`) and Gymnasium's (`ALE/Pong-v5`, an
alias), stepped by ale-py's own C++ vector engine with EnvPool's preprocessing (frame skip 4
with the last two frames max-pooled, 84 x 84 grayscale, a stack of 4, up to 30 no-op starts,
sticky actions 0.25, episodic life and reward clipping on request, 27,000 steps a game at
most; `AtariOptions`).

ALE is GPL-2.0: nothing of it is copied or linked into this project; `ale-py` is used through
its public Python interfaces, as Gymnasium uses it. Without it no Atari id is registered and
an Atari id is refused saying how to install it (`atari_hint`).

Doors: the host pool (`make(id, n)`, `make(id, n, batch_size=B)`, `gymnasium.make_vec
("metagraph/Pong-v5", n)`) and `Environment(id, n, door="host")`. The in-graph doors refuse:
ale-py's emulator state cannot be copied into a program's state (see docs/environments.md)."""

from __future__ import annotations

from components.envs.atari.games import AtariOptions, make_spec, roms
from components.envs.engine.catalogue import UNKNOWN_ID_HINTS, register

NAMESPACE = "ALE"


def atari_vector_env(spec, num_envs, seed, num_threads, batch_size):
    """The host pool of an Atari spec: synchronous, or asynchronous with `batch_size`."""
    if batch_size is not None:
        from components.envs.atari.async_vector_env import AtariAsyncVectorEnv

        return AtariAsyncVectorEnv(spec, num_envs, batch_size, seed, num_threads)
    from components.envs.atari.vector_env import AtariVectorEnv

    return AtariVectorEnv(spec, num_envs, seed, num_threads)


def atari_hint(name: str) -> str:
    """What to say of `name` when it looks like an Atari id and ale-py is not installed."""
    from metagraph.install_hints import install_hint

    game = name.removeprefix(f"{NAMESPACE}/")
    if game.endswith("-v5") and not ATARI_IDS:
        return f"; Atari games need ale-py: {install_hint('atari')}"
    return ""


ATARI_IDS = tuple(roms())  # ("Adventure-v5", ..., "Pong-v5", ...); () without ale-py


def register_games() -> None:
    """Register every Atari id (`components.envs` calls it after the other families, so that
    the games come last in `env_ids()`)."""
    UNKNOWN_ID_HINTS.append(atari_hint)
    for env_id in ATARI_IDS:
        register(env_id, make_spec, vector_env=atari_vector_env, family="atari",
                 scoring_kwargs={"reward_clip": False, "episodic_life": False},
                 max_episode_steps=AtariOptions.max_episode_steps,
                 aliases=(f"{NAMESPACE}/{env_id}",))


__all__ = ["ATARI_IDS", "AtariOptions", "atari_hint", "atari_vector_env", "make_spec",
           "register_games"]
