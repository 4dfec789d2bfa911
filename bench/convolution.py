"""The CNN's convolution on XLA's CPU backend: `PatchConv2D` (haiku's `Conv2D` computed as a
product of the image's patches with the kernel) against haiku's `Conv2D`, as PPO runs them:
the gradient inside a scan of minibatches (8 of 1024 MinAtar planes, 10 x 10 x 4) and the
forward pass inside a rollout's scan (128 steps of 64). Each contender in a fresh process.

    python bench/convolution.py            # both, one line each, then the ratio
    python bench/convolution.py --one patches|haiku
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CONTENDERS = ("patches", "haiku")


def run_one(which: str, rounds: int) -> dict:
    import haiku as hk
    import jax
    import numpy as np
    from timing import timed

    from components.networks.cnn import PatchConv2D

    def network(x):
        conv = PatchConv2D(16, 3) if which == "patches" else hk.Conv2D(16, 3)
        h = jax.nn.relu(conv(x)).reshape(x.shape[0], -1)
        h = jax.nn.relu(hk.Linear(128)(h))
        return hk.Linear(6)(h).sum() + hk.Linear(1)(h).sum()

    net = hk.without_apply_rng(hk.transform(network))
    rng = np.random.default_rng(0)
    minibatches = rng.integers(0, 2, (8, 1024, 10, 10, 4)).astype(np.float32)
    steps = rng.integers(0, 2, (128, 64, 10, 10, 4)).astype(np.float32)
    params = net.init(jax.random.PRNGKey(0), minibatches[0])

    @jax.jit
    def learn(params, xs):
        def update(p, x):
            grads = jax.grad(net.apply)(p, x)
            return jax.tree.map(lambda w, g: w - 1e-3 * g, p, grads), None
        return jax.lax.scan(update, params, xs)[0]

    @jax.jit
    def act(params, xs):
        return jax.lax.scan(lambda total, x: (total + net.apply(params, x), None), 0.0, xs)[0]

    learning = timed(lambda: jax.block_until_ready(learn(params, minibatches)), rounds)
    acting = timed(lambda: jax.block_until_ready(act(params, steps)), rounds)
    return {"contender": which,
            "gradient_us_per_sample": statistics.median(learning) / 8192 * 1e6,
            "forward_us_per_sample": statistics.median(acting) / 8192 * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", choices=CONTENDERS, help="run one contender in this process")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.rounds)))
        return
    rows = {}
    for which in CONTENDERS:
        out = subprocess.run([sys.executable, __file__, "--one", which, "--rounds",
                              str(args.rounds)], check=True, capture_output=True, text=True)
        rows[which] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{which:8s} gradient {rows[which]['gradient_us_per_sample']:6.2f} us/sample, "
              f"forward {rows[which]['forward_us_per_sample']:5.2f} us/sample")
    for key in ("gradient_us_per_sample", "forward_us_per_sample"):
        print(f"haiku / patches, {key.split('_')[0]}: "
              f"{rows['haiku'][key] / rows['patches'][key]:.2f}x")


if __name__ == "__main__":
    main()
