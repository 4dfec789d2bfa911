"""`check(env_id)`: the engine's conformance check of an environment, every door (what
Gymnasium's `check_env` is for one `gymnasium.Env`). Anyone can run it on their own task:

    from components.envs import check
    report = check("Catch-v0")        # raises ConformanceError listing every failed case

Cases: the host pool and the in-graph door give the same steps for the same seed; rewards
are finite and observations finite and inside the declared observation space; results do
not depend on the thread count (with enough environments that every thread steps some); the
same seed gives the same run; a state read (`records`) and set again (`set_records`, the
in-graph state) goes on identically; `reset(options={"state"})` starts from a physical state
that `physical_state()` reads back; a pickled pool goes on where it was; bad actions are
refused on every door with every environment's state intact; forged in-graph states (a NaN
word, a step count outside the episode) are refused; a game's random playouts draw legal
moves (its own `random_legal` too) and end only where the game does; auto-reset reports the
final observation at the time limit; the pure-JAX twin, where there is one, steps close to
the task from the same physical state.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.engine import catalogue
from components.envs.engine.actions import MUST_OFFER_A_MOVE
from components.envs.engine.in_graph import InGraphEnv, records_of, state_of
from components.envs.engine.vector_env import VectorEnv


class ConformanceError(AssertionError):
    """Raised by `check` with every case that failed."""


def _draws(spec: Any, rng: np.random.Generator, steps: int, n: int) -> np.ndarray:
    """What each step's actions come from: a uniform number per environment (discrete: which
    of the legal actions), or the continuous actions themselves."""
    if spec.discrete:
        return rng.uniform(0.0, 1.0, (steps, n))
    low = np.broadcast_to(spec.action_space.low, spec.action_shape)
    high = np.broadcast_to(spec.action_space.high, spec.action_shape)
    return rng.uniform(low, high, (steps, n, *spec.action_shape)).astype(np.float32)


def _act(spec: Any, draw: np.ndarray, mask: Callable[[], np.ndarray]) -> np.ndarray:
    """The actions of one step: for a discrete task the draw picks among the legal actions of
    each environment's state (`mask()`), the same on every door from the same states."""
    if not spec.discrete:
        return draw
    legal = np.asarray(mask())
    stuck = np.flatnonzero(~legal.any(axis=1))
    if stuck.size:  # (every environment is in an episode going on: the pools auto-reset)
        raise AssertionError(f"environment {stuck[0]} offers no legal action, though its "
                             f"episode goes on: {MUST_OFFER_A_MOVE}")
    pick = np.floor(draw * legal.sum(axis=1)).astype(np.int64)
    return np.array([np.flatnonzero(row)[k] for row, k in zip(legal, pick, strict=True)],
                    np.int32)


def _bad_action(spec: Any, actions: np.ndarray) -> np.ndarray:
    bad = actions.copy()
    if spec.discrete:
        bad[-1] = spec.action_space.n
    else:
        bad[-1].flat[0] = np.nan
    return bad


def _run_host(env: VectorEnv, draws: np.ndarray) -> list[np.ndarray]:
    out = []
    for draw in draws:
        obs, reward, terminated, truncated, info = env.step(_act(env.env_spec, draw,
                                                                 env.legal_mask))
        final = obs
        if "final_obs" in info:  # rows of ended episodes (zeros elsewhere): as in-graph's
            ended = info["_final_obs"].reshape(-1, *[1] * (obs.ndim - 1))
            final = np.where(ended, info["final_obs"], obs)
        out += [obs.astype(np.float32), reward.astype(np.float32), terminated, truncated,
                final.astype(np.float32)]
    return out


def _unequal(a: Any, b: Any) -> np.ndarray:
    """Where two results differ, a NaN equal to a NaN (a task whose rewards are NaN is
    refused by its own case, not as thread dependence too)."""
    a, b = np.asarray(a), np.asarray(b)
    unequal = a != b
    if a.dtype.kind == "f":
        unequal &= ~(np.isnan(a) & np.isnan(b))
    return unequal


def check(env_id: str, num_envs: int = 6, steps: int = 30, seed: int = 0, twin: bool = True,
          twin_tolerance: float = 1e-4, **kwargs: Any) -> dict[str, str]:
    """Run every conformance case on `env_id` made with `kwargs`; returns {case: "ok"} or
    raises ConformanceError naming each failed case and why. `twin=False` skips the pure-JAX
    twin's case (MJX compiles for minutes on a CPU). A family with an engine of its own (Atari)
    is refused (TypeError)."""
    spec = catalogue.spec(env_id, **kwargs)
    if spec.task is None:
        family = catalogue.family_of(env_id) or "its family"
        raise TypeError(f"check({env_id!r}): {spec.env_id} steps in an engine of its own "
                        f"({family}'s host pool), whose states the cases cannot read or set "
                        f"and which has no in-graph door: test that pool against its own "
                        f"reference (Atari's is tested frame by frame against ale-py's own "
                        f"vector env and Gymnasium's AtariPreprocessing)")
    rng = np.random.default_rng(seed)
    actions = _draws(spec, rng, steps, num_envs)
    results: dict[str, str] = {}

    def case(name: str, body: Callable[[], None]) -> None:
        try:
            body()
            results[name] = "ok"
        except Exception as error:  # every case is reported, not only the first
            results[name] = f"FAILED: {type(error).__name__}: {error}"

    host_run = None

    def host_vs_in_graph() -> None:
        nonlocal host_run
        host = VectorEnv(spec, num_envs, seed=seed, num_threads=1)
        first, _ = host.reset(seed=seed)
        host_run = _run_host(host, actions)
        door = InGraphEnv(spec, 1)
        state, first_in_graph = door.reset(jnp.asarray(jax.random.PRNGKey(seed)), num_envs)
        shape = (num_envs, *spec.observation_space.shape)
        for where, obs, dtype in (("host pool", first, spec.observation_space.dtype),
                                  ("in-graph door", first_in_graph,
                                   spec.graph_observation_dtype)):
            if obs.shape != shape or obs.dtype != dtype:
                raise AssertionError(f"the {where}'s observations are {obs.dtype}"
                                     f"{list(obs.shape)}, the space says {dtype}{list(shape)}")
        step = jax.jit(functools.partial(door.step, final_obs=True))
        out = []
        for draw in actions:
            action = _act(spec, draw, functools.partial(door.legal_mask, state))
            result = step(state, jnp.asarray(action))
            state = result.state
            out += [np.asarray(x) for x in (result.obs, result.reward, result.terminated,
                                            result.truncated, result.final_obs)]
        for ours, theirs in zip(host_run, out, strict=True):
            np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(records_of(state), host.records())

    def threads_do_not_matter() -> None:
        # enough environments that two and three threads each get a part of their own (the
        # pool gives a thread no fewer than the task's min_per_thread)
        n = max(num_envs, 3 * spec.task.min_per_thread)
        draws = _draws(spec, np.random.default_rng(seed + 1), min(steps, 10), n)
        runs = []
        for threads in (1, 2, 3):
            env = VectorEnv(spec, n, seed=seed, num_threads=threads)
            env.reset(seed=seed)
            runs.append((_run_host(env, draws), env.records()))
        names = ("observation", "reward", "terminated", "truncated", "final observation")
        for threads, (run, records) in zip((2, 3), runs[1:], strict=True):
            for k, (a, b) in enumerate(zip(runs[0][0], run, strict=True)):
                differ = np.flatnonzero(_unequal(a, b).reshape(n, -1).any(axis=1))
                if differ.size:
                    raise AssertionError(f"with {threads} threads, step {k // 5}'s "
                                         f"{names[k % 5]} of environment {differ[0]} differs "
                                         f"from one thread's ({differ.size} of {n} "
                                         f"environments differ)")
            np.testing.assert_array_equal(runs[0][1], records)

    def outputs_inside_their_spaces() -> None:
        space = spec.observation_space
        for t in range(steps):
            obs, reward, _, _, final = host_run[5 * t: 5 * t + 5]
            bad = np.flatnonzero(~np.isfinite(reward))
            if bad.size:
                raise AssertionError(f"step {t}: environment {bad[0]}'s reward is "
                                     f"{reward[bad[0]]}")
            for name, rows in (("observation", obs), ("final observation", final)):
                rows = rows.reshape(len(rows), -1)  # (index k: of the flattened observation)
                bad = np.argwhere(~np.isfinite(rows))
                if bad.size:
                    i, k = bad[0]
                    raise AssertionError(f"step {t}: environment {i}'s {name} has "
                                         f"{rows[i, k]} at index {k}")
                low, high = (np.broadcast_to(bound, (len(rows), *space.shape))
                             .reshape(rows.shape) for bound in (space.low, space.high))
                bad = np.argwhere((rows < low) | (rows > high))
                if bad.size:
                    i, k = bad[0]
                    raise AssertionError(f"step {t}: environment {i}'s {name} {rows[i, k]} at "
                                         f"index {k} is outside the declared observation "
                                         f"space [{low[i, k]}, {high[i, k]}]")

    def deterministic() -> None:
        again = VectorEnv(spec, num_envs, seed=seed, num_threads=1)
        again.reset(seed=seed)
        for a, b in zip(host_run, _run_host(again, actions), strict=True):
            np.testing.assert_array_equal(a, b)

    def state_round_trip() -> None:
        env = VectorEnv(spec, num_envs, seed=seed)
        env.reset(seed=seed)
        _run_host(env, actions[: steps // 2])
        copy = VectorEnv(spec, num_envs, seed=seed + 1)
        copy.set_records(env.records())
        door = InGraphEnv(spec, 1)
        state = jnp.asarray(state_of(env.records()))
        rest = actions[steps // 2:]
        ours, theirs = _run_host(env, rest), _run_host(copy, rest)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
        for draw in rest:
            action = _act(spec, draw, functools.partial(door.legal_mask, state))
            state = door.step(state, jnp.asarray(action)).state
        np.testing.assert_array_equal(records_of(state), env.records())
        physics = env.physical_state()
        env.reset(options={"state": physics})
        np.testing.assert_array_equal(env.physical_state(), physics)
        assert (env.elapsed_steps() == 0).all(), "reset to a state starts a new episode"

    def pickling_mid_episode() -> None:
        env = VectorEnv(spec, num_envs, seed=seed)
        env.reset(seed=seed)
        _run_host(env, actions[:5])
        copy = pickle.loads(pickle.dumps(env))
        for a, b in zip(_run_host(env, actions[5:]), _run_host(copy, actions[5:]), strict=True):
            np.testing.assert_array_equal(a, b)

    def bad_actions_refused() -> None:
        env = VectorEnv(spec, num_envs, seed=seed)
        env.reset(seed=seed)
        before = env.records()
        first = _act(spec, actions[0], env.legal_mask)
        try:
            env.step(_bad_action(spec, first))
        except ValueError as error:
            assert spec.env_id in str(error) and f"index {num_envs - 1}" in str(error), error
        else:
            raise AssertionError("the host pool stepped a bad action")
        np.testing.assert_array_equal(env.records(), before)
        door = InGraphEnv(spec, 1)
        state, _ = door.reset(jnp.asarray(jax.random.PRNGKey(seed)), num_envs)
        try:
            jax.block_until_ready(door.step(state, jnp.asarray(_bad_action(spec, first))))
        except Exception as error:  # XLA's error type
            assert f"index {num_envs - 1}" in str(error), error
        else:
            raise AssertionError("the in-graph door stepped a bad action")

    def forged_states_refused() -> None:
        door = InGraphEnv(spec, 1)
        state, _ = door.reset(jnp.asarray(jax.random.PRNGKey(seed)), num_envs)
        records = records_of(state)
        legal = _act(spec, actions[0], lambda: door.legal_mask(state))
        for forged_word, value in ((0, np.float64(np.nan).view(np.uint64)),
                                   (-1, np.uint64(spec.max_episode_steps))):
            forged = records.copy()
            forged[num_envs - 1, forged_word] = value
            try:
                jax.block_until_ready(door.step(jnp.asarray(state_of(forged)),
                                                jnp.asarray(legal)))
            except Exception as error:
                assert f"environment {num_envs - 1}" in str(error), error
            else:
                raise AssertionError(f"the in-graph door stepped a forged state (word "
                                     f"{forged_word})")
            pool = VectorEnv(spec, num_envs, seed=seed)
            try:
                pool.set_records(forged)
            except ValueError:
                pass
            else:
                raise AssertionError("set_records took a forged state")

    def auto_reset_at_the_limit() -> None:
        env = VectorEnv(spec, num_envs, seed=seed)
        env.reset(seed=seed)
        records = env.records()
        records[:, -1] = spec.max_episode_steps - 1  # one step before the time limit
        env.set_records(records)
        obs, _, terminated, truncated, info = env.step(_act(spec, actions[0],
                                                            env.legal_mask))
        assert truncated.all(), "every episode is truncated at max_episode_steps"
        assert "final_obs" in info and info["_final_obs"].all()
        assert (env.elapsed_steps() == 0).all(), "every environment started a new episode"
        assert not np.array_equal(obs, info["final_obs"]), "obs is the next episode's first"

    def players_in_range() -> None:
        players = spec.num_players
        env = VectorEnv(spec, num_envs, seed=seed, num_threads=1)
        env.reset(seed=seed)
        for t, draw in enumerate(actions):
            _, _, terminated, truncated, info = env.step(_act(spec, draw, env.legal_mask))
            to_move, going = info["player_to_move"], ~(terminated | truncated)
            bad = np.flatnonzero(going & ~((to_move >= 0) & (to_move < players)))
            if bad.size:
                raise AssertionError(f"step {t}: environment {bad[0]} reports player "
                                     f"{to_move[bad[0]]:g} to move in a game going on; a game "
                                     f"of {players} players has players 0..{players - 1} "
                                     f"(task.h, player_to_move)")

    def playouts_legal() -> None:
        # from the first position and from positions a few moves on: every move a playout
        # draws (the task's random_legal, or the engine's draw from the mask) is checked
        env = VectorEnv(spec, num_envs, seed=seed, num_threads=1)
        env.reset(seed=seed)
        door = InGraphEnv(spec, 1)
        for moves in (0, 2):
            _run_host(env, actions[:moves])
            playout = door.playout(jnp.asarray(state_of(env.records())),
                                   jax.random.PRNGKey(seed), check_draws=True)
            ended = np.asarray(playout.extras["player_to_move"]) == -1
            at_limit = (np.asarray(playout.length) + env.elapsed_steps()
                        >= spec.max_episode_steps)
            if not (ended | at_limit).all():
                k = int(np.flatnonzero(~(ended | at_limit))[0])
                raise AssertionError(f"environment {k}'s playout stopped in a game going on")

    def twin_close() -> None:
        twin_factory = catalogue.registration(env_id).twin
        if twin_factory is None:
            return
        twin = twin_factory(spec)
        door = InGraphEnv(spec, 1)
        env = VectorEnv(spec, num_envs, seed=seed)
        env.reset(seed=seed)
        physics = env.physical_state()
        ours = door.state_from_physical(physics)
        theirs = twin.state_from_physical(physics)
        action = jnp.asarray(_act(spec, actions[0], env.legal_mask))
        ours_out = door.step(jnp.asarray(ours), action)
        twin_out = twin.step(theirs, action)
        np.testing.assert_allclose(np.asarray(twin_out.obs), np.asarray(ours_out.obs),
                                   rtol=twin_tolerance, atol=twin_tolerance)

    case("host pool equals in-graph door", host_vs_in_graph)
    case("results independent of the thread count", threads_do_not_matter)
    if host_run is not None:
        case("finite rewards, observations inside the observation space",
             outputs_inside_their_spaces)
        case("determinism", deterministic)
    case("state round trip (records, in-graph state, reset options)", state_round_trip)
    case("pickling mid-episode", pickling_mid_episode)
    case("bad actions refused, state intact", bad_actions_refused)
    case("forged states refused", forged_states_refused)
    case("auto-reset and final observations", auto_reset_at_the_limit)
    if spec.num_players > 1:
        case("the player to move one of the game's players", players_in_range)
        case("random playouts draw legal moves to the game's end", playouts_legal)
    if twin:
        case("pure-JAX twin close to the task", twin_close)
    failed = {name: why for name, why in results.items() if why != "ok"}
    if failed:
        raise ConformanceError(f"{spec.env_id}: {len(failed)} of {len(results)} conformance "
                               f"cases failed:\n" + "\n".join(f"- {name}: {why}"
                                                              for name, why in failed.items()))
    return results
