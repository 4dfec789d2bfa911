"""Atari steps per second (Pong-v5, random actions, auto-reset on), the same preprocessing in
every contender (EnvPool's: frame skip 4 with max-pooling, 84x84 grayscale, a stack of 4, up
to 30 no-op starts, FIRE reset, sticky actions 0.25, no clipping, no episodic life).

    python bench/atari_throughput.py [--sizes 8 16 32 64] [--threads 1 2] [--steps 4000]
        [--envpool-python /tmp/envpool-venv/bin/python]

Contenders, each in a fresh process (start-up is not timed; the pool is made, reset and
warmed up first), every size and thread count:

- ours: `components.envs.make("Pong-v5", N, num_threads=T)`, the engine's host pool over
  ale-py's vector engine (what it adds: action checks, the raw score and life bookkeeping);
- ours-async: `make("Pong-v5", N, batch_size=N // 2)`, two batches in flight;
- ours-in-program: the same pool behind the host door, stepped from a compiled `lax.scan` of
  100 steps through ordered `io_callback`s (what a fused rollout of PPO pays per step);
- ale-py: `ale_py.vector_env.AtariVectorEnv("pong", N, num_threads=T)`, the same emulator
  and threads without the engine: the overhead is what is measured;
- ale-py-xla: the same engine through its own XLA FFI targets (`AtariVectorEnv.xla()`, next-step
  auto-reset, the only mode they take), stepped from a compiled `lax.scan` of 100 steps: what
  an in-graph Atari door built on them would cost, against ours-in-program;
- envpool: `envpool.make_gymnasium("Pong-v5", num_envs=N, num_threads=T)` (envpool 1.2 in its
  own environment, `--envpool-python`; `python -m venv /tmp/envpool-venv &&
  /tmp/envpool-venv/bin/pip install envpool`);
- gymnasium-async: `gymnasium.make_vec("ALE/Pong-v5", N, vectorization_mode="async")` with
  `AtariPreprocessing` + `FrameStackObservation`, one process per environment (the thread
  count does not apply; run once per size).

Each contender is timed REPEATS times and its best kept; with `--rounds R` every contender runs
in R fresh processes, alternated round by round (this shared machine's speed drifts by 10-20%
between processes a minute apart), and the table shows each one's median. The table gives
steps per second (x4 for frames) and ours' ratio to each peer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

REPEATS = 3
SCAN = 100  # steps a compiled call of ours-in-program
OPTIONS = dict(noop_max=30, repeat_action_probability=0.25)


def _scanned(body, state):
    """`step(actions)` of a compiled `lax.scan` of `body(state, action) -> (state, reward)`:
    the actions gathered, SCAN steps a call."""
    import jax

    rollout = jax.jit(lambda state, actions: jax.lax.scan(body, state, actions))
    chunk = []

    def step(actions):
        nonlocal state
        chunk.append(actions.astype(np.int32))
        if len(chunk) == SCAN:
            state, rewards = rollout(state, np.stack(chunk))
            rewards.block_until_ready()
            chunk.clear()

    return step


def _make(contender: str, n: int, threads: int):
    """(reset, step(actions)) of one contender's pool."""
    if contender in ("ours", "ours-async"):
        import components.envs as envs

        if contender == "ours":
            env = envs.make("Pong-v5", n, seed=0, num_threads=threads, **OPTIONS)
            env.reset()
            return env.step
        env = envs.make("Pong-v5", n, seed=0, num_threads=threads, batch_size=n // 2,
                        **OPTIONS)
        env.async_reset()
        env.recv()
        half = n // 2

        def step(actions):
            env.send(actions[:half])
            return env.recv()

        return step
    if contender == "ours-in-program":
        import jax

        import components.envs as envs
        from components.envs.engine.host_door import HostDoor

        pool = envs.make("Pong-v5", n, seed=0, num_threads=threads, **OPTIONS)
        door = HostDoor(pool.env_spec, pool)
        state, _ = door.reset(jax.random.PRNGKey(0), n)

        def body(state, action):
            out = door.step(state, action)
            return out.state, out.reward

        return _scanned(body, state)
    if contender == "ale-py":
        from ale_py.vector_env import AtariVectorEnv

        env = AtariVectorEnv("pong", n, num_threads=threads, reward_clipping=False,
                             repeat_action_probability=0.25, noop_max=30,
                             autoreset_mode="SameStep")
        env.reset(seed=0)
        return env.step
    if contender == "ale-py-xla":
        import jax
        from ale_py.vector_env import AtariVectorEnv

        env = AtariVectorEnv("pong", n, num_threads=threads, reward_clipping=False,
                             repeat_action_probability=0.25, noop_max=30,
                             autoreset_mode="NextStep")
        env.reset(seed=0)
        handle, _, xla_step = env.xla()

        def body(handle, action):
            handle, (_, reward, *_) = xla_step(handle, action)
            return handle, reward

        return _scanned(body, handle)
    if contender == "envpool":
        import envpool

        env = envpool.make_gymnasium("Pong-v5", num_envs=n, num_threads=threads, seed=0,
                                     noop_max=30, repeat_action_probability=0.25,
                                     reward_clip=False, episodic_life=False)
        env.reset()
        return env.step
    if contender == "gymnasium-async":
        import ale_py
        import gymnasium
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

        gymnasium.register_envs(ale_py)
        env = gymnasium.make_vec(
            "ALE/Pong-v5", n, vectorization_mode="async", frameskip=1,
            repeat_action_probability=0.25,
            wrappers=[lambda e: FrameStackObservation(AtariPreprocessing(e, noop_max=30), 4)])
        env.reset(seed=0)
        return env.step
    raise ValueError(contender)


def measure(contender: str, n: int, threads: int, steps: int) -> float:
    """Steps per second of one contender (in this process)."""
    step = _make(contender, n, threads)
    batch = n // 2 if contender == "ours-async" else n
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 6, (steps, n))
    scanned = contender in ("ours-in-program", "ale-py-xla")
    for t in range(2 * SCAN if scanned else 20):  # warm up
        step(actions[t % steps])
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for t in range(steps):
            step(actions[t])
        best = min(best, time.perf_counter() - start)
    return batch * steps / best


def run(python: str, contender: str, n: int, threads: int, steps: int) -> float | None:
    """One contender in a fresh process; None where it cannot run (not installed)."""
    out = subprocess.run([python, __file__, "--one", contender, str(n), str(threads),
                          str(steps)], capture_output=True, text=True)
    if out.returncode:
        print(f"  {contender} N={n} T={threads}: failed: {out.stderr.strip()[-300:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=4000,
                        help="environment steps per timed run, all environments together")
    parser.add_argument("--envpool-python", default=None)
    parser.add_argument("--no-gymnasium", action="store_true")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        contender, n, threads, steps = args.one
        print(json.dumps(measure(contender, int(n), int(threads), int(steps))))
        return
    print("| N | threads | ours | ours-async | ours-in-program | ale-py-xla | ale-py | envpool | "
          "gymnasium-async | ours / ale-py | ours / envpool | ours / gymnasium | "
          "ours-in-program / ale-py-xla |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    gym_rate: dict[int, float | None] = {}
    for n in args.sizes:
        for threads in args.threads:
            steps = max(20, args.steps // n)
            plan = [(sys.executable, c, steps) for c in ("ours", "ours-async", "ale-py")]
            for scanned in ("ours-in-program", "ale-py-xla"):
                plan.append((sys.executable, scanned, max(SCAN, steps // SCAN * SCAN)))
            if args.envpool_python:
                plan.append((args.envpool_python, "envpool", steps))
            found: dict[str, list[float]] = {}
            for _ in range(args.rounds):  # alternated: drift spreads over every contender
                for python, contender, count in plan:
                    rate = run(python, contender, n, threads, count)
                    if rate is not None:
                        found.setdefault(contender, []).append(rate)
            rates: dict[str, float | None] = {
                c: statistics.median(found[c]) if c in found else None
                for c in ("ours", "ours-async", "ours-in-program", "ale-py-xla", "ale-py",
                          "envpool")}
            if n not in gym_rate:
                gym_rate[n] = None if args.no_gymnasium else run(
                    sys.executable, "gymnasium-async", n, 1, max(10, steps // 4))
            rates["gymnasium-async"] = gym_rate[n]

            def cell(c, rates=rates):
                return f"{rates[c]:,.0f}" if rates[c] else "-"

            def ratio(c, rates=rates):
                return f"{rates['ours'] / rates[c]:.2f}x" if rates[c] and rates["ours"] else "-"

            in_program = (f"{rates['ours-in-program'] / rates['ale-py-xla']:.2f}x"
                          if rates["ours-in-program"] and rates["ale-py-xla"] else "-")
            print(f"| {n} | {threads} | {cell('ours')} | {cell('ours-async')} | "
                  f"{cell('ours-in-program')} | {cell('ale-py-xla')} | "
                  f"{cell('ale-py')} | {cell('envpool')} | {cell('gymnasium-async')} | "
                  f"{ratio('ale-py')} | {ratio('envpool')} | {ratio('gymnasium-async')} | "
                  f"{in_program} |", flush=True)


if __name__ == "__main__":
    main()
