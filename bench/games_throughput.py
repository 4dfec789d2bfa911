"""Random playouts of the board games, games finished per second, against peers measured in the
same run.

    python bench/games_throughput.py [--games ConnectFour-v0 Othello-v0 Hex-v0]
                                     [--sizes 1 256 4096] [--seconds 2]

Every move is a random legal move: the legal move with the largest of uniform noises drawn before
timing (as `env_throughput.py` draws its actions before timing: every row times playing, not
drawing random numbers, which would cost pgx and us alike); a game that ends starts again at
once. Each contender counts moves (plies) per second; games per second are that over the mean
length of a random game, measured with OpenSpiel's rules beforehand (the same for every
contender, so the ratios are the moves' ratios). Contenders, each in a fresh process (no other
library's threads beside it), each timed `REPEATS` times after two warm-up calls (compiles
included there) and its best run kept:

- `host`: our host pool (`components.envs.make`, every core's C++ threads), its legal mask read
  and the moves picked with NumPy between steps, as a user's Python loop does;
- `graph`: our in-graph door (`SelfPlay`: the native games through the XLA FFI) in one jitted
  `lax.scan` that picks the moves over the legal mask;
- `playout`: our native random playouts (`SelfPlay.playout`: whole games played in C++
  from each game's own stream, uniformly random legal moves, as OpenSpiel's random rollouts
  play them), one jitted call from the first position counting the games it finished;
- `pgx`: pgx's same game under `jax.jit(jax.vmap(...))` with its `auto_reset`, in the same
  `lax.scan` picking moves the same way (pgx's own way to run many games on one device);
- `openspiel`: OpenSpiel's Python API (`pyspiel`), N states stepped in turn from Python.

The goals (issue 25): at N=4096, our best at least 10x pgx and at least 50x OpenSpiel.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from timing import contender_arguments, in_fresh_process

REPEATS = 3  # timed runs of every contender; the best is kept (load only ever slows one down)
PGX_NAMES = {"ConnectFour-v0": "connect_four", "Othello-v0": "othello", "Hex-v0": "hex"}


def best_rate(run, seconds: float) -> float:
    """Moves per second of `run(calls) -> moves played`, after two warm-up calls (the first
    compiles): the number of calls is chosen to last about `seconds`, and the best of
    `REPEATS` timed runs is kept."""
    run(1)
    start = time.perf_counter()
    run(1)
    calls = max(1, int(seconds / max(time.perf_counter() - start, 1e-6)))
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        moves = run(calls)
        best = max(best, moves / (time.perf_counter() - start))
    return best


def noise(n: int, actions: int, moves: int) -> np.ndarray:
    """Uniform noise float32[moves, n, actions], drawn once: move t of a call picks, in each
    game, the legal action with the largest noise[t]."""
    return np.random.default_rng(0).random((moves, n, actions), np.float32)


def num_actions(env_id: str) -> int:
    from components.envs.engine import catalogue

    return int(catalogue.spec(env_id).action_space.n)


def host(env_id: str, n: int, seconds: float) -> float:
    import components.envs as envs

    env = envs.make(env_id, n, seed=0)
    env.reset(seed=0)
    moves = moves_per_call(n)
    drawn = noise(n, num_actions(env_id), moves)

    def run(calls: int) -> int:
        for _ in range(calls):
            for t in range(moves):
                action = np.argmax(np.where(env.legal_mask(), drawn[t], -1.0), axis=1)
                env.step(action.astype(np.int32))
        return calls * moves * n

    return best_rate(run, seconds)


def scan_playouts(step, legal, drawn: np.ndarray):
    """A jitted function `state -> state` playing `len(drawn)` moves in every game,
    `step(state, action)` and `legal(state)` the game's, move t the legal action with the
    largest `drawn[t]`."""
    import jax
    import jax.numpy as jnp

    drawn = jnp.asarray(drawn)
    actions = jnp.arange(drawn.shape[-1], dtype=jnp.int32)

    def body(state, noise):
        # argmax over the legal moves as two plain reductions (the largest noise, then the
        # first action holding it): the same move as jnp.argmax, whose paired value-and-index
        # reduction XLA's CPU backend runs 2-3x slower (Hex: 1.8 against 0.65 ms a move at
        # N=4096), a cost every contender's scan pays alike.
        scores = jnp.where(legal(state), noise, -1.0)
        best = scores.max(axis=-1, keepdims=True)
        action = jnp.min(jnp.where(scores == best, actions, drawn.shape[-1]), axis=-1)
        return step(state, action), None

    @jax.jit
    def play(state):
        return jax.lax.scan(body, state, drawn)[0]

    return play


def moves_per_call(n: int) -> int:
    return max(16, 8192 // n)


def playout_rate(play, state, n: int, seconds: float) -> float:
    import jax

    holder = {"state": state}

    def run(calls: int) -> int:
        for _ in range(calls):
            holder["state"] = play(holder["state"])
        jax.block_until_ready(holder["state"])
        return calls * moves_per_call(n) * n

    return best_rate(run, seconds)


def graph(env_id: str, n: int, seconds: float) -> float:
    import jax

    from components.envs.games.self_play import SelfPlay

    games = SelfPlay(env_id)
    play = scan_playouts(games.step, lambda s: s.legal_action_mask,
                         noise(n, games.num_actions, moves_per_call(n)))
    return playout_rate(play, games.init(jax.random.PRNGKey(0), n), n, seconds)


def playout(env_id: str, n: int, seconds: float) -> float:
    import jax

    from components.envs.games.self_play import SelfPlay

    games = SelfPlay(env_id)
    state = games.init(jax.random.PRNGKey(0), n)
    play = jax.jit(games.playout)
    holder = {"key": jax.random.PRNGKey(1)}

    def run(calls: int) -> int:
        moves = 0
        lengths = []
        for _ in range(calls):
            holder["key"], key = jax.random.split(holder["key"])
            lengths.append(play(state, key)[1])
        for length in lengths:
            moves += int(length.sum())
        return moves

    return best_rate(run, seconds)


def pgx_rate(env_id: str, n: int, seconds: float) -> float:
    import jax
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(PGX_NAMES[env_id])
    batched_step = jax.vmap(auto_reset(env.step, env.init))

    def step(carry, action):
        state, key = carry
        key, draw = jax.random.split(key)  # auto_reset's key of the next game
        return batched_step(state, action, jax.random.split(draw, n)), key

    play = scan_playouts(step, lambda carry: carry[0].legal_action_mask,
                         noise(n, env.num_actions, moves_per_call(n)))
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), n))
    return playout_rate(play, (state, jax.random.PRNGKey(2)), n, seconds)


def openspiel(env_id: str, n: int, seconds: float) -> float:
    import pyspiel

    from components.envs.games import OPENSPIEL_NAMES

    game = pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    rng = np.random.default_rng(0)
    states = [game.new_initial_state() for _ in range(n)]

    def run(calls: int) -> int:
        moves = max(1, 256 // n)  # rounds over the n states a call
        for _ in range(calls * moves):
            for i, state in enumerate(states):
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
                if state.is_terminal():
                    states[i] = game.new_initial_state()
        return calls * moves * n

    return best_rate(run, seconds)


def mean_game_length(env_id: str, games: int = 500) -> float:
    """The mean number of moves of a random game, with OpenSpiel's rules."""
    import pyspiel

    from components.envs.games import OPENSPIEL_NAMES

    game, rng, moves = pyspiel.load_game(OPENSPIEL_NAMES[env_id]), np.random.default_rng(0), 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            moves += 1
    return moves / games


CONTENDERS = {"host": host, "graph": graph, "playout": playout, "pgx": pgx_rate,
              "openspiel": openspiel}
OURS = ("host", "graph", "playout")


def fresh(name: str, env_id: str, n: int, seconds: float) -> float | str:
    """One contender's rate, measured in a new Python process; "failed" if it failed."""
    return in_fresh_process(__file__, "--one", name, "--env", env_id, "--n", str(n),
                            "--seconds", str(seconds))


def fmt(value: float | str) -> str:
    return f"{value:>11,.0f}" if isinstance(value, float) else f"{value:>11}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(PGX_NAMES))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 256, 4096])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--env", help=argparse.SUPPRESS)
    contender_arguments(parser)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(CONTENDERS[args.one](args.env, args.n, args.seconds)))
        return
    print(f"random playouts, games per second (moves per second over a random game's mean "
          f"length; each contender in a fresh process, best of {REPEATS} runs of about "
          f"{args.seconds:g} s)")
    header = ["game", "N", *CONTENDERS, "best/pgx", "best/spiel"]
    print(" ".join(f"{h:>14}" if i == 0 else f"{h:>11}" for i, h in enumerate(header)))
    for env_id in args.games:
        length = mean_game_length(env_id)
        for n in args.sizes:
            row = {name: fresh(name, env_id, n, args.seconds)
                   for name in CONTENDERS}
            row = {k: v / length if isinstance(v, float) else v for k, v in row.items()}
            ours = max((row[k] for k in OURS if isinstance(row[k], float)), default=None)
            ratios = [ours / row[peer] if ours and isinstance(row[peer], float) else None
                      for peer in ("pgx", "openspiel")]
            cells = [f"{env_id:>14}", f"{n:>11}", *(fmt(v) for v in row.values()),
                     *(f"{r:>11.1f}" if r else f"{'-':>11}" for r in ratios)]
            print(" ".join(cells), flush=True)
        print(f"{env_id}: a random game lasts {length:.1f} moves (OpenSpiel's rules, 500 "
              f"games)")
    print("best: the fastest of ours (host pool, in-graph steps, native playouts).")


if __name__ == "__main__":
    main()
