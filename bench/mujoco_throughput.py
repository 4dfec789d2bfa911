"""Environment steps per second of a MuJoCo task, N = 1, 16, 64, 256 environments:
metagraph's host pool, in-graph door and MJX twin (door "jax") against Gymnasium's own MuJoCo
`make_vec` (sync and async), EnvPool's MuJoCo tasks (where its wheel installs), MuJoCo's
`mujoco.rollout` (open loop, no rewards or resets) and a bare C++ loop of `mj_step` over the
same model (the physical limit), with random actions; then a 256-256 MLP policy choosing the
actions, fused with the in-graph door into one compiled rollout, against the host pool fed by
the same policy through one jit call per step. Each contender runs in a fresh process, every
contender once per round, `--repeats` rounds (default 3), the best run kept; one
environment step is `frame_skip` MuJoCo steps; compile time is not counted.

    python bench/mujoco_throughput.py                       # HalfCheetah-v5, threads 1 and 2
    python bench/mujoco_throughput.py --env Hopper-v5 --seconds 2
    python bench/mujoco_throughput.py --only policy         # contenders whose name has "policy"
    python bench/mujoco_throughput.py --sizes 64 --only "host pool, 1" bare --repeats 5  # per core
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

from timing import contender_arguments, in_fresh_process

SIZES = (1, 16, 64, 256)

BARE_LOOP = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <mujoco/mujoco.h>
// argv: model path, environments, frame skip, seconds. Prints environment steps per second.
int main(int argc, char** argv) {
  char error[1000];
  mjModel* m = mj_loadXML(argv[1], nullptr, error, sizeof(error));
  if (!m) { std::fprintf(stderr, "%s\n", error); return 1; }
  const int n = std::atoi(argv[2]), skip = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  std::vector<mjData*> data;
  for (int i = 0; i < n; ++i) data.push_back(mj_makeData(m));
  unsigned state = 1;
  long steps = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (mjData* d : data) {
      for (int j = 0; j < m->nu; ++j) {
        state = state * 1664525u + 1013904223u;
        d->ctrl[j] = (state >> 8) * (2.0 / 16777216.0) - 1.0;
      }
      for (int k = 0; k < skip; ++k) mj_step(m, d);
      mj_rnePostConstraint(m, d);
    }
    steps += n;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::printf("%f\n", steps / elapsed);
  return 0;
}
"""


def timed(step, n, seconds, warmup=3):
    """Environment steps per second of `step()` (n environments a call), after a warm-up."""
    for _ in range(warmup):
        step()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        calls += 1
    return calls * n / (time.perf_counter() - start)


def run_metagraph_host(env_id, n, seconds, threads):
    import numpy as np

    from components.envs import make

    env = make(env_id, n, seed=0, num_threads=threads)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    low, high = env.single_action_space.low, env.single_action_space.high
    actions = rng.uniform(low, high, (64, n, len(low))).astype(np.float32)
    counter = iter(range(10**12))
    return timed(lambda: env.step(actions[next(counter) % 64]), n, seconds)


def run_metagraph_graph(env_id, n, seconds, threads, door="native", steps=100):
    import jax
    import jax.numpy as jnp

    from components.envs import make_functional

    env = make_functional(env_id, door=door, num_threads=threads)
    nu = env.env_spec.action_shape[0]

    @jax.jit
    def rollout(state, key):
        def body(carry, _):
            state, key = carry
            key, sub = jax.random.split(key)
            action = jax.random.uniform(sub, (n, nu), jnp.float32, -1.0, 1.0)
            out = env.step(state, action)
            return (out.state, key), out.reward
        (state, key), rewards = jax.lax.scan(body, (state, key), None, length=steps)
        return state, key, rewards.sum()

    state, _ = env.reset(jax.random.PRNGKey(0), n)
    holder = {"state": state, "key": jax.random.PRNGKey(1)}

    def call():
        holder["state"], holder["key"], total = rollout(holder["state"], holder["key"])
        total.block_until_ready()

    return timed(call, n * steps, seconds, warmup=2 if door == "jax" else 3)


def mlp_policy(obs_dim, nu, hidden=(256, 256), seed=0):
    """A 256-256 tanh MLP with tanh actions: (params, policy(params, obs) -> actions)."""
    import jax
    import jax.numpy as jnp

    sizes = (obs_dim, *hidden, nu)
    keys = jax.random.split(jax.random.PRNGKey(seed), len(sizes) - 1)
    params = [(jax.random.normal(k, (a, b), jnp.float32) / jnp.sqrt(a), jnp.zeros(b))
              for k, a, b in zip(keys, sizes[:-1], sizes[1:], strict=True)]

    def policy(params, obs):
        x = obs
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return jnp.tanh(x @ w + b)

    return params, policy


def run_policy_fused(env_id, n, seconds):
    """Policy and physics in one compiled program: a scan of 100 steps (in-graph door)."""
    import jax

    from components.envs import make_functional

    env = make_functional(env_id, door="native")
    params, policy = mlp_policy(env.obs_dim, env.env_spec.action_shape[0])
    steps = 100

    @jax.jit
    def rollout(params, state, obs):
        def body(carry, _):
            state, obs = carry
            out = env.step(state, policy(params, obs))
            return (out.state, out.obs), out.reward
        (state, obs), rewards = jax.lax.scan(body, (state, obs), None, length=steps)
        return state, obs, rewards.sum()

    state, obs = env.reset(jax.random.PRNGKey(0), n)
    holder = {"state": state, "obs": obs}

    def call():
        holder["state"], holder["obs"], total = rollout(params, holder["state"], holder["obs"])
        total.block_until_ready()

    return timed(call, n * steps, seconds)


def run_policy_host(env_id, n, seconds, threads=1):
    """The host pool fed by the same policy, one jit call per step (obs in, actions out):
    stepping and inference alternate."""
    import jax
    import numpy as np

    from components.envs import make

    env = make(env_id, n, seed=0, num_threads=threads)
    obs, _ = env.reset(seed=0)
    params, policy = mlp_policy(obs.shape[1], env.single_action_space.shape[0])
    act = jax.jit(policy)
    holder = {"obs": obs}

    def call():
        actions = np.asarray(act(params, holder["obs"].astype(np.float32)))
        holder["obs"] = env.step(actions)[0]

    return timed(call, n, seconds)


def run_policy_pipelined(env_id, n, seconds, groups=2):
    """The asynchronous host pool fed by the same policy, `groups` groups of n / groups: the
    C++ threads step one group while the jit call runs the policy for another (recv, policy,
    send); one thread per group."""
    import jax
    import numpy as np

    from components.envs import make

    batch = n // groups
    env = make(env_id, n, seed=0, num_threads=groups, batch_size=batch)
    env.async_reset(seed=0)
    params, policy = mlp_policy(env.single_observation_space.shape[0],
                                env.single_action_space.shape[0])
    act = jax.jit(policy)

    def call():
        obs, *_, info = env.recv()
        env.send(np.asarray(act(params, obs.astype(np.float32))), info["env_id"])

    rate = timed(call, batch, seconds)
    env.close()
    return rate


def run_envpool(env_id, n, seconds, threads):
    import numpy as np

    try:
        import envpool
    except ImportError as error:
        raise Unavailable(f"EnvPool is not installed ({error}); `pip install envpool` found "
                          f"no wheel for this Python, or it was not installed") from None
    env = envpool.make_gymnasium(env_id, num_envs=n, batch_size=n, num_threads=threads, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    low, high = env.action_space.low, env.action_space.high
    actions = rng.uniform(low, high, (64, n, len(low))).astype(np.float32)
    counter = iter(range(10**12))
    return timed(lambda: env.step(actions[next(counter) % 64]), n, seconds)


class Unavailable(Exception):
    """A contender that cannot run on this machine (its package is missing)."""


def run_gymnasium(env_id, n, seconds, mode):
    import gymnasium

    env = gymnasium.make_vec(env_id, n, vectorization_mode=mode)
    env.reset(seed=0)
    env.action_space.seed(0)
    rate = timed(lambda: env.step(env.action_space.sample()), n, seconds)
    env.close()
    return rate


def run_rollout(env_id, n, seconds):
    import mujoco
    import numpy as np
    from mujoco import rollout

    from components.envs.mujoco.tasks import TASKS, model_path

    task = TASKS[env_id]
    model = mujoco.MjModel.from_xml_path(model_path(task.xml_file))
    data = mujoco.MjData(model)
    size = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    state = np.zeros(size)
    mujoco.mj_getState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    env_steps = 100
    nstep = env_steps * task.frame_skip
    rng = np.random.default_rng(0)
    control = rng.uniform(-1, 1, (n, nstep, model.nu))
    initial = np.tile(state, (n, 1))
    return timed(lambda: rollout.rollout(model, data, initial, control), n * env_steps, seconds)


def run_bare(env_id, n, seconds):
    import importlib.util

    from components.envs.mujoco.tasks import TASKS, model_path

    root = list(importlib.util.find_spec("mujoco").submodule_search_locations)[0]
    library = [f for f in os.listdir(root) if f.startswith("libmujoco.so.")][0]
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = os.path.join(tmp, "bare.cc"), os.path.join(tmp, "bare")
        with open(source, "w") as f:
            f.write(BARE_LOOP)
        subprocess.run(["g++", "-O2", "-std=c++17", source, "-o", binary, f"-I{root}/include",
                        os.path.join(root, library), f"-Wl,-rpath,{root}"], check=True)
        task = TASKS[env_id]
        out = subprocess.run([binary, model_path(task.xml_file), str(n), str(task.frame_skip),
                              str(seconds)], check=True, capture_output=True, text=True)
    return float(out.stdout)


def run_metagraph_make_vec(env_id, n, seconds):
    """`gymnasium.make_vec("metagraph/<id>", n)` as a user writes it: the default threads."""
    import gymnasium
    import numpy as np

    import components.envs  # noqa: F401  (registers metagraph/<id>)

    env = gymnasium.make_vec(f"metagraph/{env_id}", num_envs=n)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (64,) + env.action_space.shape)
    actions = actions.astype(np.float32)
    count = [0]

    def step():
        env.step(actions[count[0] % 64])
        count[0] += 1

    return timed(step, n, seconds)


BARE = "bare C++ mj_step loop (1 thread)"

CONTENDERS = {
    "metagraph via gymnasium.make_vec (default threads)": run_metagraph_make_vec,
    "metagraph host pool, 1 thread": lambda e, n, s: run_metagraph_host(e, n, s, 1),
    "metagraph host pool, 2 threads": lambda e, n, s: run_metagraph_host(e, n, s, 2),
    "metagraph host pool, all cores": lambda e, n, s: run_metagraph_host(e, n, s,
                                                                          os.cpu_count() or 1),
    "metagraph in-graph (scan of 100), 1 thread": lambda e, n, s: run_metagraph_graph(e, n, s, 1),
    "metagraph in-graph (scan of 100), 2 threads": lambda e, n, s: run_metagraph_graph(e, n, s,
                                                                                         2),
    "metagraph MJX twin, door jax (scan of 10)": lambda e, n, s: run_metagraph_graph(
        e, n, s, 1, door="jax", steps=10),
    "Gymnasium make_vec sync": lambda e, n, s: run_gymnasium(e, n, s, "sync"),
    "Gymnasium make_vec async": lambda e, n, s: run_gymnasium(e, n, s, "async"),
    "EnvPool, 1 thread": lambda e, n, s: run_envpool(e, n, s, 1),
    "EnvPool, 2 threads": lambda e, n, s: run_envpool(e, n, s, 2),
    "mujoco.rollout (open loop, 1 thread)": run_rollout,
    BARE: run_bare,
    "256-256 MLP policy fused with the in-graph door (scan of 100, 1 thread)": run_policy_fused,
    "256-256 MLP policy, host pool fed by a jit call per step (1 thread)": run_policy_host,
    "256-256 MLP policy, host pool fed by a jit call per step (2 threads)":
        lambda e, n, s: run_policy_host(e, n, s, 2),
    "256-256 MLP policy, async host pool in 2 groups, a jit call per group (1 thread each)":
        run_policy_pipelined,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=3,
                        help="round-robin runs of every contender; the best is kept")
    parser.add_argument("--only", nargs="+", default=[""],
                        help="run the contenders whose name has any of these")
    contender_arguments(parser)
    args = parser.parse_args()
    if args.one:
        try:
            print(json.dumps(CONTENDERS[args.one](args.env, args.n, args.seconds)))
        except Unavailable as error:
            print(json.dumps(str(error)))
        return
    names = [name for name in CONTENDERS if any(part in name for part in args.only)]
    best: dict[tuple[str, int], float | str] = {}
    # Round-robin repeats, each contender in a fresh process every time, the best kept: load
    # on a shared machine only ever slows a run down, and interleaving spreads it over everyone.
    for _ in range(args.repeats):
        for name in names:
            for n in args.sizes:
                if isinstance(best.get((name, n)), str):
                    continue  # unavailable or failed: said once
                best[(name, n)] = max_rate(best.get((name, n)), one_run(args, name, n))
    print(f"{args.env}: environment steps per second (best of {args.repeats} runs of "
          f"{args.seconds} s, each in a fresh process)")
    print("| contender | " + " | ".join(f"N={n}" for n in args.sizes) + " |")
    print("|---|" + "---:|" * len(args.sizes))
    for name in names:
        cells = [best[(name, n)] for n in args.sizes]
        if isinstance(cells[0], str):
            print(f"| {name} | {cells[0]} |")
        else:
            print(f"| {name} | " + " | ".join(
                f"{c:,.0f}" if isinstance(c, float) else c for c in cells) + " |")
    print_ratios(best, args.sizes)


def one_run(args, name: str, n: int) -> float | str:
    """One contender in a fresh process: steps per second, or why it did not run."""
    result = in_fresh_process(__file__, "--env", args.env, "--seconds", str(args.seconds),
                              "--one", name, "--n", str(n))
    if result == "failed":
        return result
    return f"unavailable: {result}" if isinstance(result, str) else float(result)


def max_rate(seen: float | str | None, new: float | str) -> float | str:
    if isinstance(new, str) or seen is None:
        return new
    return max(seen, new)


def print_ratios(best: dict, sizes: list[int]) -> None:
    """The issue's goals as ratios of this run's figures."""
    def rate(name, n):
        value = best.get((name, n))
        return value if isinstance(value, float) else None

    for n in sizes:
        host, bare = rate("metagraph host pool, 1 thread", n), rate(BARE, n)
        default = rate("metagraph via gymnasium.make_vec (default threads)", n)
        gym = [rate(f"Gymnasium make_vec {mode}", n) for mode in ("sync", "async")]
        gym = [g for g in gym if g is not None]
        if host and bare:
            print(f"N={n}: host pool, 1 thread / bare mj_step loop = {host / bare:.2f}")
        if default and gym:
            print(f"N={n}: make_vec default threads / Gymnasium's best make_vec mode = "
                  f"{default / max(gym):.2f}")

if __name__ == "__main__":
    main()
