"""Random playouts of the board games, games finished per second, against peers measured in the
same run.

    python bench/games_throughput.py [--games ConnectFour-v0 Othello-v0 Hex-v0]
                                     [--sizes 1 256 4096] [--seconds 2]

Every move is a uniformly random legal move; a game that ends starts again at once. Contenders,
each in a fresh process (no other library's threads beside it), each timed `REPEATS` times after
a warm-up (compiles included there) and its best run kept:

- `host`: our host pool (`components.envs.make`, every core's C++ threads), its legal mask read
  and the random legal moves drawn with NumPy between steps, as a user's Python loop does;
- `graph`: our in-graph door (`SelfPlay`: the native games through the XLA FFI) in one jitted
  `lax.scan`, moves drawn with `jax.random.categorical` over the legal mask;
- `pgx`: pgx's same game under `jax.jit(jax.vmap(...))` with its `auto_reset`, in the same
  `lax.scan` with the same move draw (pgx's own way to run many games on one device);
- `openspiel`: OpenSpiel's Python API (`pyspiel`), N states stepped in turn from Python.

The goals (issue 25): at N=4096, our best at least 10x pgx and at least 50x OpenSpiel.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

REPEATS = 3  # timed runs of every contender; the best is kept (load only ever slows one down)
PGX_NAMES = {"ConnectFour-v0": "connect_four", "Othello-v0": "othello", "Hex-v0": "hex"}


def best_rate(run, seconds: float) -> float:
    """Games per second of `run(calls) -> games finished`, after a warm-up call: the number of
    calls is chosen to last about `seconds`, and the best of `REPEATS` timed runs is kept."""
    start = time.perf_counter()
    run(1)
    calls = max(1, int(seconds / max(time.perf_counter() - start, 1e-6)))
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        games = run(calls)
        best = max(best, games / (time.perf_counter() - start))
    return best


def host(env_id: str, n: int, seconds: float) -> float:
    import components.envs as envs

    env = envs.make(env_id, n, seed=0)
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def run(calls: int) -> int:
        games = 0
        for _ in range(calls * 64):
            mask = env.legal_mask()
            # a uniformly random legal move: the largest of uniform draws over the legal ones
            action = np.argmax(np.where(mask, rng.random(mask.shape), -1.0), axis=1)
            _, _, terminated, _, _ = env.step(action.astype(np.int32))
            games += int(terminated.sum())
        return games

    return best_rate(run, seconds)


def scan_playouts(step, legal, n: int, moves: int):
    """A jitted function `(state, key) -> (state, key, games finished)` playing `moves` random
    legal moves in every game, `step(state, action)` and `legal(state)` the game's."""
    import jax
    import jax.numpy as jnp

    def body(carry, _):
        state, key, games = carry
        key, draw = jax.random.split(key)
        logits = jnp.where(legal(state), 0.0, -jnp.inf)
        action = jax.random.categorical(draw, logits).astype(jnp.int32)
        state, ended = step(state, action)
        return (state, key, games + ended.sum()), None

    @jax.jit
    def play(state, key):
        (state, key, games), _ = jax.lax.scan(body, (state, key, jnp.int32(0)), None,
                                              length=moves)
        return state, key, games

    return play


def moves_per_call(n: int) -> int:
    return max(16, 8192 // n)


def playout_rate(play, state, key, seconds: float) -> float:
    holder = {"state": state, "key": key}

    def run(calls: int) -> int:
        games = 0
        for _ in range(calls):
            holder["state"], holder["key"], ended = play(holder["state"], holder["key"])
            games += int(ended)
        return games

    return best_rate(run, seconds)


def graph(env_id: str, n: int, seconds: float) -> float:
    import jax

    from components.envs.games.self_play import SelfPlay

    games = SelfPlay(env_id)
    play = scan_playouts(lambda s, a: (lambda t: (t, t.terminated))(games.step(s, a)),
                         lambda s: s.legal_action_mask, n, moves_per_call(n))
    return playout_rate(play, games.init(jax.random.PRNGKey(0), n), jax.random.PRNGKey(1),
                        seconds)


def pgx_rate(env_id: str, n: int, seconds: float) -> float:
    import jax
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(PGX_NAMES[env_id])
    batched_step = jax.vmap(auto_reset(env.step, env.init))

    def step(carry, action):
        state, key = carry
        key, draw = jax.random.split(key)
        state = batched_step(state, action, jax.random.split(draw, n))
        return (state, key), state.terminated

    play = scan_playouts(step, lambda carry: carry[0].legal_action_mask, n, moves_per_call(n))
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), n))
    return playout_rate(play, (state, jax.random.PRNGKey(2)), jax.random.PRNGKey(1), seconds)


def openspiel(env_id: str, n: int, seconds: float) -> float:
    import pyspiel

    from components.envs.games import OPENSPIEL_NAMES

    game = pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    rng = np.random.default_rng(0)
    states = [game.new_initial_state() for _ in range(n)]

    def run(calls: int) -> int:
        games = 0
        for _ in range(calls):
            for i, state in enumerate(states):
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
                if state.is_terminal():
                    states[i] = game.new_initial_state()
                    games += 1
        return games

    return best_rate(run, seconds)


CONTENDERS = {"host": host, "graph": graph, "pgx": pgx_rate, "openspiel": openspiel}


def in_fresh_process(name: str, env_id: str, n: int, seconds: float) -> float | str:
    """One contender's rate, measured in a new Python process; a message if it failed."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name, "--env",
                           env_id, "--n", str(n), "--seconds", str(seconds)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1][:60]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def fmt(value: float | str) -> str:
    return f"{value:>11,.0f}" if isinstance(value, float) else f"{value:>11}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(PGX_NAMES))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 256, 4096])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # time one contender in this process
    parser.add_argument("--env", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(CONTENDERS[args.one](args.env, args.n, args.seconds)))
        return
    print(f"random playouts, games per second (each contender in a fresh process, best of "
          f"{REPEATS} runs of about {args.seconds:g} s)")
    header = ["game", "N", *CONTENDERS, "best/pgx", "best/spiel"]
    print(" ".join(f"{h:>14}" if i == 0 else f"{h:>11}" for i, h in enumerate(header)))
    for env_id in args.games:
        for n in args.sizes:
            row = {name: in_fresh_process(name, env_id, n, args.seconds)
                   for name in CONTENDERS}
            ours = max((row[k] for k in ("host", "graph") if isinstance(row[k], float)),
                       default=None)
            ratios = [ours / row[peer] if ours and isinstance(row[peer], float) else None
                      for peer in ("pgx", "openspiel")]
            cells = [f"{env_id:>14}", f"{n:>11}", *(fmt(v) for v in row.values()),
                     *(f"{r:>11.1f}" if r else f"{'-':>11}" for r in ratios)]
            print(" ".join(cells), flush=True)
    print("best: the faster of our two doors (host pool, in-graph).")


if __name__ == "__main__":
    main()
