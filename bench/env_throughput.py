"""Environment steps per second on CartPole-v1, random actions, auto-reset on, against peers
measured in the same run.

    python bench/env_throughput.py [--sizes 1 16 256 4096] [--steps 1000] [--rounds R]
                                   [--contenders host-1t host-2t ...]

Last, the engine's step of CartPole against the same C++ loop written by hand
(`bench/engine_vs_hand.cpp`, compiled here with the modules' flags), one thread, N=4096: what
the engine's generic loop and its checks cost.

Actions come as int32 and as NumPy's default int64 (CartPole), float32 and float64
(Pendulum-v1, a second table). Every contender runs in a fresh process (no other library's
threads beside it). Ours: the host loop (1 and 2 C++ threads), the in-graph rollout
(`lax.scan` of the FFI step, one compiled program; 1 and 2 C++ threads inside the step) and
the pure-JAX twin under the same scan. Peers: Gymnasium's NumPy-vectorised CartPole
(`vectorization_mode="vector_entry_point"`), a single Gymnasium CartPole stepped from Python
(N=1), gymnax's CartPole under jit+vmap, EnvPool. A peer that is not installed is reported as
such. Actions are drawn before timing, so every row times stepping only. Every contender is
timed REPEATS times after a warm-up and its best run kept. With `--rounds R` every contender
runs in R fresh processes, the contenders alternated round by round (this shared machine's
speed drifts by 2x between runs a minute apart), and the table shows each one's median.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from timing import contender_arguments, in_fresh_process

import components.envs as envs

REPEATS = 5  # timed runs of every contender; the best is kept (load only ever slows one down)


def rate(n: int, steps: int, run) -> float:
    run(min(steps, 20))  # warm up (compiles, first touches)
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        run(steps)
        best = min(best, time.perf_counter() - start)
    return n * steps / best


def ours_host(n: int, steps: int, threads: int, dtype=np.int32,
              env_id: str = "CartPole-v1") -> float:
    env = envs.make(env_id, n, seed=0, num_threads=threads)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    if env.env_spec.discrete:
        actions = rng.integers(0, env.single_action_space.n, (steps, n)).astype(dtype)
    else:
        low, high = env.single_action_space.low, env.single_action_space.high
        actions = rng.uniform(low, high, (steps, n, *low.shape)).astype(dtype)

    def run(k):
        for t in range(k):
            env.step(actions[t])

    return rate(n, steps, run)


def ours_in_graph(n: int, steps: int, door: str = "native", threads: int = 1) -> float:
    env = envs.make_functional("CartPole-v1", door=door, num_threads=threads)

    def rollout(key, actions):
        state, obs = env.reset(key, n)

        def body(carry, action):
            out = env.step(carry[0], action)
            return (out.state, out.obs), out.reward

        (_, last_obs), rewards = jax.lax.scan(body, (state, obs), actions)
        return rewards.sum() + last_obs.sum()  # uses the dynamics: nothing is optimised away

    actions = jax.random.randint(jax.random.PRNGKey(1), (steps, n), 0, 2, jnp.int32)
    compiled = jax.jit(rollout).lower(jax.random.PRNGKey(0), actions).compile()
    jax.block_until_ready(compiled(jax.random.PRNGKey(0), actions))  # compile, warm up
    return rate(n, steps, lambda _: jax.block_until_ready(compiled(jax.random.PRNGKey(0),
                                                                    actions)))


def gymnasium_vector(n: int, steps: int) -> float:
    env = gymnasium.make_vec("CartPole-v1", n, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, (steps, n))

    def run(k):
        for t in range(k):
            env.step(actions[t])

    return rate(n, steps, run)


def gymnasium_single(steps: int) -> float:
    env = gymnasium.make("CartPole-v1")
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, steps).tolist()

    def run(k):
        for t in range(k):
            _, _, terminated, truncated, _ = env.step(actions[t])
            if terminated or truncated:
                env.reset()

    return rate(1, steps, run)


def gymnax_rate(n: int, steps: int) -> float | str:
    try:
        import gymnax
    except ImportError:
        return "not installed"
    env, params = gymnax.make("CartPole-v1")

    def rollout(key):
        keys = jax.random.split(key, n)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def body(carry, key):
            state, _ = carry
            step_keys = jax.random.split(key, n)
            actions = jax.random.randint(key, (n,), 0, 2)
            obs, state, reward, *_ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                step_keys, state, actions, params)
            return (state, obs), reward

        (_, last_obs), rewards = jax.lax.scan(body, (state, obs), jax.random.split(key, steps))
        return rewards.sum() + last_obs.sum()

    compiled = jax.jit(rollout).lower(jax.random.PRNGKey(0)).compile()
    jax.block_until_ready(compiled(jax.random.PRNGKey(0)))
    return rate(n, steps, lambda _: jax.block_until_ready(compiled(jax.random.PRNGKey(1))))


def envpool_rate(n: int, steps: int) -> float | str:
    try:
        import envpool
    except ImportError:
        return "not installed"
    env = envpool.make_gymnasium("CartPole-v1", num_envs=n, seed=0)
    env.reset()
    actions = np.random.default_rng(0).integers(0, 2, (steps, n)).astype(np.int32)

    def run(k):
        for t in range(k):
            env.step(actions[t])

    return rate(n, steps, run)


def engine_vs_hand(n: int = 4096, steps: int = 2000) -> str:
    """Build bench/engine_vs_hand.cpp against the installed engine and run it."""
    from components.envs.engine import include_dir

    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine_vs_hand.cpp")
    binary = os.path.join(tempfile.mkdtemp(), "engine_vs_hand")
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-fno-math-errno",
                    "-fno-trapping-math", "-ffp-contract=off", f"-I{include_dir()}", source,
                    "-o", binary], check=True)
    return subprocess.run([binary, str(n), str(steps)], check=True, capture_output=True,
                          text=True).stdout.strip()


def fmt(value) -> str:
    return f"{value / 1e6:9.3f}" if isinstance(value, float) else f"{value:>9}"


CONTENDERS = {
    "host-1t": lambda n, steps: ours_host(n, steps, 1),
    "host-2t": lambda n, steps: ours_host(n, steps, 2),
    # every core of a bigger machine (the GPU check, bench/accelerator/), and NumPy's default
    # integer actions (int64) there
    # NumPy's default integer actions (int64: `integers`, `action_space.sample()`)
    "host-1t-int64": lambda n, steps: ours_host(n, steps, 1, np.int64),
    "host-2t-int64": lambda n, steps: ours_host(n, steps, 2, np.int64),
    # continuous actions: float32, and NumPy's default float64 (Pendulum-v1)
    "pendulum-1t": lambda n, steps: ours_host(n, steps, 1, np.float32, "Pendulum-v1"),
    "pendulum-1t-float64": lambda n, steps: ours_host(n, steps, 1, np.float64, "Pendulum-v1"),
    "pendulum-2t": lambda n, steps: ours_host(n, steps, 2, np.float32, "Pendulum-v1"),
    "pendulum-2t-float64": lambda n, steps: ours_host(n, steps, 2, np.float64, "Pendulum-v1"),
    "host-all": lambda n, steps: ours_host(n, steps, os.cpu_count() or 1),
    "host-all-int64": lambda n, steps: ours_host(n, steps, os.cpu_count() or 1, np.int64),
    "graph-1t": lambda n, steps: ours_in_graph(n, steps),
    "graph-2t": lambda n, steps: ours_in_graph(n, steps, threads=2),
    "jax-twin": lambda n, steps: ours_in_graph(n, steps, door="jax"),
    "gym-numpy": gymnasium_vector,
    "gym-single": lambda n, steps: gymnasium_single(steps) if n == 1 else "-",
    "gymnax": gymnax_rate,
    "envpool": envpool_rate,
}


# the table's columns (the all-core rows are the GPU check's, run one by one with --one)
TABLE = [name for name in CONTENDERS if not name.startswith(("host-all", "pendulum"))]
CONTINUOUS = [name for name in CONTENDERS if name.startswith("pendulum")]


def fresh(name: str, n: int, steps: int) -> float | str:
    """One contender timed in a new Python process (no other library's threads beside it)."""
    return in_fresh_process(__file__, "--one", name, "--n", str(n), "--steps", str(steps))


def median(values: list) -> float | str:
    numbers = sorted(v for v in values if isinstance(v, float))
    return numbers[len(numbers) // 2] if numbers else "failed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 256, 4096])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1,
                        help="fresh processes per contender, alternated; the median is shown")
    parser.add_argument("--contenders", nargs="+", choices=TABLE, default=TABLE,
                        help="the CartPole table's columns to run (default: all)")
    contender_arguments(parser)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(CONTENDERS[args.one](args.n, args.steps)))
        return
    how = (f"median of {args.rounds} alternated rounds" if args.rounds > 1 else "")
    print(f"CartPole-v1, million steps per second (each contender in a fresh process, best of "
          f"{REPEATS} runs{'; ' + how if how else ''})")
    ratios = {"host/gym": ("host-1t", "host-2t", "gym-numpy"),
              "int64/gym": ("host-1t-int64", "host-2t-int64", "gym-numpy"),
              "graph/gymnax": ("graph-1t", "graph-2t", "gymnax"),
              "host 2t/1t": ("host-2t", None, "host-1t"),
              "int64 2t/1t": ("host-2t-int64", None, "host-1t-int64")}
    print(" ".join(f"{h:>9}" for h in ["N", *args.contenders, *ratios]))
    for n in args.sizes:
        steps = max(50, min(args.steps, 2_000_000 // n))
        runs: dict[str, list] = {name: [] for name in args.contenders}
        for _ in range(args.rounds):
            for name in args.contenders:
                runs[name].append(fresh(name, n, steps))
        row = {name: median(values) for name, values in runs.items()}
        cells = [f"{n:>9}"] + [fmt(row[name]) for name in args.contenders]
        for first, second, under in ratios.values():
            ours = [row.get(k) for k in (first, second) if isinstance(row.get(k), float)]
            if n == 1 and under == "gym-numpy":
                under = "gym-single"  # N=1: over a single Gymnasium CartPole
            peer = row.get(under)
            cells.append(f"{max(ours) / peer:9.2f}" if ours and isinstance(peer, float)
                         else f"{'-':>9}")
        print(" ".join(cells), flush=True)
        if args.rounds > 1:
            print(json.dumps({"N": n, "rounds": runs}), flush=True)
    print("host/gym: best host loop over Gymnasium's NumPy CartPole (N=1: over a single "
          "Gymnasium CartPole); int64/gym: the same with NumPy's default int64 actions. "
          "graph/gymnax: best in-graph rollout over gymnax.")
    if args.contenders != TABLE:
        return
    print("\nPendulum-v1 (continuous), host pool, float32 against NumPy's default float64 "
          "actions, million steps per second")
    print(" ".join(f"{h:>19}" for h in ["N", *CONTINUOUS]))
    for n in args.sizes:
        steps = max(50, min(args.steps, 2_000_000 // n))
        cells = [f"{n:>19}"] + [f"{fmt(fresh(name, n, steps)):>19}"
                                for name in CONTINUOUS]
        print(" ".join(cells), flush=True)
    print("engine against the same loop by hand, one thread:", engine_vs_hand())

if __name__ == "__main__":
    main()
