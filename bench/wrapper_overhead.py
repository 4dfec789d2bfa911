"""What the environment wrappers add to a step: random actions stepped through the bare
`Environment` and through PPO's continuous-control stack, one wrapper at a time
(`ClipAction`, `NormalizeObservation`, `NormalizeReward`), or through `FrameStack` and
`ActionRepeat`, microseconds a step of the task and the ratio to the bare environment, in one
compiled program each (the in-graph door). An action repeat of k steps the task k times a
call of its `step`: it is called k times fewer, for the same steps of the task.

    python bench/wrapper_overhead.py                  # Hopper-v5, N = 1 and 16
    python bench/wrapper_overhead.py --env Pendulum-v1 --sizes 1 64 --steps 16384
    python bench/wrapper_overhead.py --sizes 1 --stacks bare obs reward obs+reward
    python bench/wrapper_overhead.py --env Pendulum-v1 --sizes 1 64 --stacks bare stack4 repeat4

Compile time is left out (a warm-up call first); the rounds alternate the contenders and the
median of each is printed. Start-up does not count here: what is measured is the step.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from backends import xla
from components.envs import Environment
from components.envs.wrappers import (
    ActionRepeat,
    ClipAction,
    FrameStack,
    NormalizeObservation,
    NormalizeReward,
)
from metagraph.spaces import PRNGKey

STACKS = {
    "bare": lambda env: env,
    "clip": ClipAction,
    "clip+obs": lambda env: NormalizeObservation(ClipAction(env)),
    "clip+obs+reward": lambda env: NormalizeReward(NormalizeObservation(ClipAction(env))),
    # each normaliser alone, and the two without ClipAction
    "obs": NormalizeObservation,
    "reward": NormalizeReward,
    "obs+reward": lambda env: NormalizeReward(NormalizeObservation(env)),
    # the observation's history and the action's repeats
    "stack4": lambda env: FrameStack(env, 4),
    "repeat4": lambda env: ActionRepeat(env, 4),
}
REPEATS = {"repeat4": 4}  # the task's steps a step of the stack


class RandomSteps(mg.Component):
    """`run(key)`: `env` (the component's `env`) reset, then stepped `steps` times with
    uniform random actions in [-1, 1] in one `mg.scan` (one reset a call, the same for every
    contender); returns the rewards' sum."""

    def __init__(self, env, steps):
        super().__init__()
        self.env, self.steps = env, steps

    @mg.api
    def run(self, key):
        reset_key, key = jax.random.split(key)
        self.env.reset(reset_key)
        shape = (self.env.num_envs, *self.env.action_space.shape)

        def step(total, step_key):
            action = jax.random.uniform(step_key, shape, minval=-1.0, maxval=1.0)
            return total + self.env.step(action).reward.sum(), None

        return mg.scan(step, jnp.float32(0.0), jax.random.split(key, self.steps))[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Hopper-v5")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--steps", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--stacks", nargs="+", default=list(STACKS)[:4], choices=list(STACKS),
                        help="the contenders, the first the baseline (default: the bare "
                             "environment, then PPO's stack one wrapper at a time)")
    args = parser.parse_args()
    for n in args.sizes:
        programs = {}
        for name in args.stacks:
            wrap = STACKS[name]
            steps = args.steps // REPEATS.get(name, 1)  # the same steps of the task
            exe = xla.lower(mg.build(RandomSteps(wrap(Environment(args.env, n)), steps),
                                     {"key": PRNGKey()}))
            np.asarray(exe.run(np.asarray(jax.random.PRNGKey(1))))  # compiled, warm
            programs[name] = exe
        times = {name: [] for name in programs}
        for round_ in range(args.rounds):
            for name, exe in programs.items():
                key = np.asarray(jax.random.PRNGKey(2 + round_))
                start = time.perf_counter()
                np.asarray(exe.run(key))
                times[name].append(time.perf_counter() - start)
        bare = statistics.median(times[args.stacks[0]])
        print(f"{args.env}, N={n}, {args.steps} steps of the task a call, median of "
              f"{args.rounds}:")
        for name, spent in times.items():
            median = statistics.median(spent)
            print(f"  {name:16s} {median / args.steps * 1e6:9.2f} us a step   "
                  f"{median / bare:5.2f}x {args.stacks[0]}")


if __name__ == "__main__":
    main()
