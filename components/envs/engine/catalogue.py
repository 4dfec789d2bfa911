"""Every environment the engine can make, by id: the built-in families and a user's own
(`register`). A family registers each id with a function that makes its spec from keyword
arguments; specs are made once per distinct arguments (a compiled program names a task object
by number, so it lives as long as the process)."""

from __future__ import annotations

import copyreg
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

import gymnasium
from gymnasium.envs.registration import parse_env_id

from components.envs.engine.spec import EnvSpec, check_spec, frozen
from metagraph.suggestions import did_you_mean


@dataclasses.dataclass(frozen=True)
class Registration:
    """How to make one id: `make_spec(env_id, kwargs) -> EnvSpec`, and optionally its
    pure-JAX twin `twin(spec) -> FunctionalEnv` (door "jax") and, for a game, the name of the
    same game in OpenSpiel (`openspiel`, what `pyspiel.load_game` takes). A family whose
    environments step in an engine of their own (Atari: ale-py's) gives `vector_env(spec,
    num_envs, seed, num_threads, batch_size)`, its host pool; its specs hold no task."""

    env_id: str
    make_spec: Callable[[str, dict[str, Any]], EnvSpec]
    twin: Callable[[EnvSpec], Any] | None = None
    max_episode_steps: int | None = None
    openspiel: str | None = None
    vector_env: Callable[..., Any] | None = None
    family: str = ""
    scoring_kwargs: tuple = ()


_registry: dict[str, Registration] = {}
_aliases: dict[str, str] = {}  # another name: the id it makes
_specs: dict[tuple, EnvSpec] = {}
_lock = threading.RLock()
_built_in: frozenset[str] = frozenset()  # the library's own ids and aliases (seal_built_ins)
# name -> "" or what to add to the refusal of an unknown id (a family whose package is missing)
UNKNOWN_ID_HINTS: list[Callable[[str], str]] = []


def seal_built_ins() -> None:
    """Mark every id and alias registered so far as the library's own (`components.envs`
    calls it once its families have registered): `register` refuses to replace them."""
    global _built_in
    with _lock:
        _built_in = frozenset(_registry) | frozenset(_aliases)


def register(env_id: str, make_spec: Callable[[str, dict[str, Any]], EnvSpec], *,
             twin: Callable[[EnvSpec], Any] | None = None,
             max_episode_steps: int | None = None, aliases: tuple[str, ...] = (),
             openspiel: str | None = None,
             vector_env: Callable[..., Any] | None = None, family: str = "",
             scoring_kwargs: dict[str, Any] | None = None) -> None:
    """Make `env_id` known to `make`, `make_functional`, `Environment` and Gymnasium
    (`gymnasium.make("metagraph/<env_id>")`, `gymnasium.make_vec`). Registering an id again
    replaces it (a rebuilt extension); the library's own ids are refused. Each spec
    `make_spec` makes is checked against its task (`spec.check_spec`) before anything uses
    it. `aliases`: other names of the same
    environment (OpenSpiel's `connect_four`), taken wherever an id is and made as `env_id`;
    a namespaced alias ("ALE/Pong-v5", Gymnasium's own id of the game) is taken by the
    library but not registered with Gymnasium again.
    `openspiel`: for a game, the same game in OpenSpiel as `pyspiel.load_game` takes it
    ("breakthrough(rows=6,columns=6)"): `evaluate --opponent mcts:N` then plays OpenSpiel's
    search against the agent, checking every move against OpenSpiel's rules, and `play`
    writes the board and the moves as OpenSpiel does (`openspiel_name`).
    `vector_env`: for environments that step in an engine of their own rather than a
    compiled task, `vector_env(spec, num_envs, seed, num_threads, batch_size)` gives their
    host pool (`make`; `batch_size` None: synchronous); their specs hold no task, and the
    in-graph doors refuse them. `family`: the name of the ids' family ("atari"), whose
    `[groups.<family>]` table of an agent's shipped defaults an id without a table of its own
    takes. `scoring_kwargs`: keyword arguments that evaluation plays with over a run's, so
    that it scores the task as it is (Atari: `reward_clip=False, episodic_life=False`)."""
    if not isinstance(env_id, str) or not env_id or "/" in env_id:
        raise ValueError(f"register: env_id must be a non-empty str without '/', got {env_id!r}")
    if not callable(make_spec):
        raise TypeError(f"register({env_id!r}): make_spec must be a function (env_id, kwargs) "
                        f"-> EnvSpec, got {make_spec!r}")
    for alias in aliases:
        if not isinstance(alias, str) or not alias or alias.count("/") > 1 \
                or alias.startswith("metagraph/") or alias == env_id:
            raise ValueError(f"register({env_id!r}): an alias must be another non-empty str, "
                             f"at most one '/' (a namespace other than metagraph/), got "
                             f"{alias!r}")
    if openspiel is not None and (not isinstance(openspiel, str) or not openspiel):
        raise ValueError(f"register({env_id!r}): openspiel must be the name of a game as "
                         f"pyspiel.load_game takes it, got {openspiel!r}")
    if vector_env is not None and not callable(vector_env):
        raise TypeError(f"register({env_id!r}): vector_env must be a function (spec, num_envs, "
                        f"seed, num_threads, batch_size) -> host pool, got {vector_env!r}")
    for name in (env_id, *aliases):
        if name in _built_in:
            raise ValueError(f"register({env_id!r}): {name!r} is one of the library's own "
                             f"environments; register yours under another id (its own name "
                             f"and version, 'My{name}')")
        try:
            parse_env_id(name if "/" in name else f"metagraph/{name}")
        except gymnasium.error.Error:
            raise ValueError(f"register({env_id!r}): {name!r} is no id Gymnasium takes: a "
                             f"name of letters, digits, '_', '-' or '.', and a version "
                             f"('MyGame-v0')") from None
    with _lock:
        _registry[env_id] = Registration(env_id, make_spec, twin, max_episode_steps, openspiel,
                                         vector_env, family,
                                         tuple(sorted((scoring_kwargs or {}).items())))
        _aliases.update(dict.fromkeys(aliases, env_id))
        for key in [k for k in _specs if k[0] == env_id]:
            del _specs[key]
    for name in (env_id, *[a for a in aliases if "/" not in a]):
        name = f"metagraph/{name}"
        if name in gymnasium.registry:
            del gymnasium.registry[name]
        gymnasium.register(
            id=name, entry_point="components.envs.engine.single_env:Env",
            # by name: Gymnasium keeps this spec on every wrapper, and it must pickle
            vector_entry_point="components.envs.engine.make:vector_entry_point",
            max_episode_steps=max_episode_steps, kwargs={"env_id": env_id})


def env_ids() -> tuple[str, ...]:
    """Every registered id, in registration order."""
    return tuple(_registry)


def canonical_id(env_id: Any) -> str:
    """`env_id` without the `metagraph/` namespace, an alias replaced by its id. Raises
    ValueError naming every registered environment when it is none of them (TypeError when
    it is not a str)."""
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    key = env_id.removeprefix("metagraph/")
    key = _aliases.get(key, key)
    if key not in _registry:
        hints = "".join(hint(key) for hint in UNKNOWN_ID_HINTS)
        raise ValueError(f"unknown environment {env_id!r}"
                         f"{did_you_mean(key, [*_registry, *_aliases])}{hints}; environments: "
                         f"{listed(list(_registry))} (your own is registered by "
                         f"components.envs.register; on the command line, by the module "
                         f"--env-module names)")
    return key


def listed(ids: list[str], most: int = 30) -> str:
    """`ids` for a message: every one, or the first `most` registered (classic control, the
    games, MinAtar, MuJoCo before the Atari games) and how many more `env_ids()` gives."""
    if len(ids) <= most:
        return str(ids)
    return f"{ids[:most]} and {len(ids) - most} more (components.envs.env_ids())"


def resolved_id(name: str) -> str:
    """The registered id a name stands for (the `metagraph/` namespace stripped, an alias such
    as OpenSpiel's `connect_four` replaced); a name no registration knows comes back unchanged
    (a Gymnasium id behind the host door)."""
    key = name.removeprefix("metagraph/")
    key = _aliases.get(key, key)
    return key if key in _registry else name


def registration(env_id: str) -> Registration:
    """The registration of `env_id` (checked by `canonical_id`)."""
    return _registry[canonical_id(env_id)]


def spec(env_id: str, **kwargs: Any) -> EnvSpec:
    """The spec of `env_id` made with keyword arguments `kwargs`, made once per arguments."""
    key = canonical_id(env_id)
    items = frozen(kwargs)
    with _lock:
        if (key, items) not in _specs:
            made = _registry[key].make_spec(key, dict(kwargs))
            made = check_spec(key, made, own_engine=_registry[key].vector_env is not None)
            _specs[(key, items)] = dataclasses.replace(made, kwargs=items)
        return _specs[(key, items)]


def num_players(env_id: Any) -> int:
    """The players taking turns in `env_id` (any name `canonical_id` takes), as its task
    declares them (`num_players()`, engine/task.h): 2 or more for a turn-based game, the
    built-in board games and a user's own alike, which self-play, AlphaZero, `evaluate
    --opponent` and `play` take; 1 for a task that is no game and for a name that is no
    registered environment (a Gymnasium id)."""
    if not isinstance(env_id, str) or resolved_id(env_id) not in _registry:
        return 1
    return spec(env_id).num_players


def scored_kwargs(env_id: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments evaluation makes `env_id` with: a run's `kwargs` with its
    registration's `scoring_kwargs` over them (Atari scores the raw game: no clipping, no
    episodic life); `kwargs` for any other name."""
    if not isinstance(env_id, str) or resolved_id(env_id) not in _registry:
        return dict(kwargs)
    return {**kwargs, **dict(_registry[resolved_id(env_id)].scoring_kwargs)}


def family_of(env_id: Any) -> str:
    """The family name `env_id` was registered with ("atari"), or "" (none given, or a name
    that is no registered environment)."""
    if not isinstance(env_id, str) or resolved_id(env_id) not in _registry:
        return ""
    return _registry[resolved_id(env_id)].family


def openspiel_name(env_id: Any) -> str | None:
    """The name of `env_id`'s game in OpenSpiel as its registration gives it (`register(...,
    openspiel=...)`: "connect_four" for ConnectFour-v0), or None: no OpenSpiel twin, or a
    name that is no registered environment."""
    if not isinstance(env_id, str) or resolved_id(env_id) not in _registry:
        return None
    return _registry[resolved_id(env_id)].openspiel


def observation_shape(env_id: str) -> tuple[int, int, int]:
    """The planes of `env_id`'s observation, (rows, columns, planes), channels last
    (`EnvSpec.planes` of its spec with its defaults): what a CNN reshapes the `Environment`
    component's float32 vectors to. A ValueError for an observation that is no planes."""
    planes = spec(env_id).planes
    if planes is None:
        raise ValueError(f"{env_id}: its observation is no planes (its task's obs_shape() "
                         f"has not three axes and its info has no rows, columns and planes)")
    return planes


def spec_from_items(env_id: str, items: tuple) -> EnvSpec:
    """`spec` from the items of `EnvSpec.kwargs` (unpickling; importing this module imported
    `components.envs`, whose families registered their ids)."""
    return spec(env_id, **dict(items))


# A spec pickles by id and arguments: its task object belongs to this process.
copyreg.pickle(EnvSpec, lambda made: (spec_from_items, (made.env_id, made.kwargs)))
