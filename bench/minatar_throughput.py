"""MinAtar steps per second, random actions, auto-reset on, against peers measured in the same
run (issue 34 part 5).

    python bench/minatar_throughput.py [--games Breakout Asterix ...] [--sizes 1 256 4096]
                                       [--steps 500]

Contenders, each in a fresh process (no other library's threads beside it), each timed
REPEATS times after a warm-up and its best run kept; actions are drawn before timing as
NumPy's default int64 (what `integers` and `action_space.sample()` give):

- `host`: our host pool (`components.envs.make`, every core's C++ threads, sticky actions on);
- `graph`: our in-graph door (`make_functional`: the C++ step through the XLA FFI, every
  core's threads inside the step) in one jitted `lax.scan` carrying the observations;
- `gymnax`: gymnax's MinAtar game (its own JAX port: no sticky actions) under
  `jax.jit(jax.vmap(...))` in the same `lax.scan`, carrying its observations too (unread,
  XLA would not compute them);
- `minatar`: the `minatar` package itself (Young and Tian's NumPy code, sticky actions on),
  environments stepped in turn from Python as the package's own Gym wrapper steps them
  (`minatar/gym.py`: `game.act(action)`, then `game.state()`, the observation every other
  contender returns too), timed after 300 steps of play;
- `minatar-act`: the same without `state()`, the game's rules alone (no observation): a
  floor under the package's cost, shown for comparison.

The goals: at N=4096, `graph` at least 5x gymnax, `host` at least 20x the package (stepped
with its observations, as a user of it gets them).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from timing import contender_arguments, in_fresh_process, timed

REPEATS = 3  # timed runs of every contender; the best is kept (load only ever slows one down)
PACKAGE_NAMES = {"Breakout": "breakout", "Asterix": "asterix", "Freeway": "freeway",
                 "Seaquest": "seaquest", "SpaceInvaders": "space_invaders"}


def rate(n: int, steps: int, run) -> float:
    """Steps per second of `run(steps)` over `n` environments, best of REPEATS (after one
    warm-up call: compiles, first touches)."""
    return n * steps / min(timed(lambda: run(steps), REPEATS, warmup=1))


def actions(n: int, steps: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 6, (steps, n))  # int64, NumPy's default


def host(game: str, n: int, steps: int) -> float:
    import components.envs as envs

    env = envs.make(f"MinAtar-{game}-v0", n, seed=0)
    env.reset(seed=0)
    drawn = actions(n, steps)

    def run(k):
        for t in range(k):
            env.step(drawn[t])

    return rate(n, steps, run)


def scanned(reset, step, n: int, steps: int) -> float:
    """Steps per second of `step(carry, action) -> (carry, reward)` from `reset(key)` in one
    jitted `lax.scan` over drawn actions. The carry holds each step's observations, as a
    policy reading them would (a peer's observations left unread would be optimised away)."""
    import jax
    import jax.numpy as jnp

    drawn = jnp.asarray(actions(n, steps), jnp.int32)

    def rollout(key, drawn):
        carry, rewards = jax.lax.scan(step, reset(key), drawn)
        return rewards.sum() + sum(leaf.sum() for leaf in jax.tree.leaves(carry[-1]))

    compiled = jax.jit(rollout).lower(jax.random.PRNGKey(0), drawn).compile()
    return rate(n, steps, lambda _: jax.block_until_ready(compiled(jax.random.PRNGKey(0),
                                                                    drawn)))


def graph(game: str, n: int, steps: int) -> float:
    import components.envs as envs

    env = envs.make_functional(f"MinAtar-{game}-v0", num_threads=os.cpu_count() or 1)

    def step(carry, action):
        out = env.step(carry[0], action)
        return (out.state, out.obs), out.reward

    return scanned(lambda key: env.reset(key, n), step, n, steps)


def gymnax_rate(game: str, n: int, steps: int) -> float | str:
    try:
        import gymnax
    except ImportError:
        return "not installed"
    import jax

    env, params = gymnax.make(f"{game}-MinAtar")

    def reset(key):
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, n), params)
        return state, key, obs

    def step(carry, action):
        state, key, _ = carry
        key, draw = jax.random.split(key)
        obs, state, reward, *_ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(draw, n), state, action, params)
        return (state, key, obs), reward

    return scanned(reset, step, n, steps)


def package(game: str, n: int, steps: int, observe: bool = True) -> float | str:
    """The package steps one environment at a time, so its rate does not depend on N: it is
    measured over min(N, 64) environments, after 300 steps of play (a game's first steps,
    with few entities on the board, are its cheapest). With `observe`, each step also makes
    the observation (`state()`), as the package's Gym wrapper's `step` does."""
    try:
        from minatar import Environment
    except ImportError:
        return "not installed"
    n = min(n, 64)
    games = [Environment(PACKAGE_NAMES[game]) for _ in range(n)]
    for i, env in enumerate(games):
        env.seed(i)
        env.reset()
    drawn = actions(n, steps + 300).tolist()

    def play(rows):
        for row in rows:
            for env, action in zip(games, row, strict=True):
                _, terminal = env.act(action)
                if terminal:
                    env.reset()
                if observe:
                    env.state()

    play(drawn[steps:])  # into the games
    return rate(n, steps, lambda k: play(drawn[:k]))


CONTENDERS = {"host": host, "graph": graph, "gymnax": gymnax_rate, "minatar": package,
              "minatar-act": lambda game, n, steps: package(game, n, steps, observe=False)}
# Steps each contender is timed for: gymnax fewer (a rate is per step; its Seaquest steps
# about 10^4 a second), the package 200 over at most 64 environments
STEPS_OF = {"host": lambda steps, n: steps, "graph": lambda steps, n: steps,
            "gymnax": lambda steps, n: max(10, steps // 10),
            "minatar": lambda steps, n: 200, "minatar-act": lambda steps, n: 200}


def fresh(name: str, game: str, n: int, steps: int) -> float | str:
    """One contender timed in a new Python process."""
    return in_fresh_process(__file__, "--one", name, "--games", game, "--n", str(n),
                            "--steps", str(steps))


def fmt(value) -> str:
    return f"{value / 1e6:9.3f}" if isinstance(value, float) else f"{value:>9}"


def ratio(a, b) -> str:
    return f"{a / b:9.1f}" if isinstance(a, float) and isinstance(b, float) else f"{'-':>9}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(PACKAGE_NAMES))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 256, 4096])
    parser.add_argument("--steps", type=int, default=500)
    contender_arguments(parser)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(CONTENDERS[args.one](args.games[0], args.n, args.steps)))
        return
    print(f"MinAtar, million steps per second (each contender in a fresh process, best of "
          f"{REPEATS} runs; int64 actions)")
    header = ["game", "N", *CONTENDERS, "graph/gymnax", "host/minatar", "host/m-act"]
    print(" ".join(f"{h:>13}" for h in header))
    for game in args.games:
        for n in args.sizes:
            steps = max(20, min(args.steps, 1_000_000 // n))
            row = {name: fresh(name, game, n, STEPS_OF[name](steps, n))
                   for name in CONTENDERS}
            cells = [f"{game:>13}", f"{n:>13}"] + [f"{fmt(v):>13}" for v in row.values()]
            cells += [f"{ratio(row['graph'], row['gymnax']):>13}",
                      f"{ratio(row['host'], row['minatar']):>13}",
                      f"{ratio(row['host'], row['minatar-act']):>13}"]
            print(" ".join(cells), flush=True)


if __name__ == "__main__":
    main()
