"""Distributed sampling on Ray against the same agent in one process, and the cost of Ray's
transport per trajectory batch.

    pip install -e ".[ray]" && python bench/distributed.py [--envs 64] [--steps 64] [--rounds 40]
        [--rollouts 8]

IMPALA on CartPole-v1, a batch of `envs` x `steps` environment steps (4096 by default):

1. Sampling only: environment steps per second of one `Sampler` called in this process, and of
   1 and 2 Ray sampler actors kept busy (two requests queued on each) by a driver that only
   collects batches.
2. Transport, one Ray sampler:
   - the round trip of an empty call to the actor, Ray's floor per call;
   - kept busy as a learner keeps it (two requests in flight, new weights after every
     batch), with 1, `rollouts` and 16 batches per request: the wall time per batch
     delivered to the driver minus the sampling time inside the actor is Ray's overhead,
     printed as a share of that sampling time (goal: <= 10% at 4096 steps) and, against
     the sampling time of the same sampler in this process, as a share of that.
3. Training: environment steps per second consumed by the V-trace learner with its samplers
   in this process, and with 1 and 2 Ray samplers; the learner's own update rate alone.
4. A projection to 16, 64 and 256 samplers, each on its own core: min(K x the rate one Ray
   sampler delivers, the learner's update rate), which says where the learner becomes the
   bottleneck.

Every figure is the median over `rounds` batches after a warm-up, except the kept-busy
transport's: wall time and sampling time per batch are means over the same 4 x `rounds`
batches (they arrive in bursts of one request's batches, and a busy machine's pauses fall
on both).
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import numpy as np
from timing import timed

from backends import xla
from components.agents.impala_config import ImpalaConfig
from components.training import keys_for
from components.training.algorithms import Impala
from components.training.distributed import (
    Learner,
    LocalSamplers,
    RaySamplers,
    Sampler,
    connect,
)


def rate(batch_steps: int, seconds: list[float]) -> float:
    return batch_steps / statistics.median(seconds)


def sampling_in_process(config: ImpalaConfig, weights: dict, rounds: int) -> list[float]:
    sampler = Sampler("impala", "CartPole-v1", config.to_dict(), 0, 0, 1)
    sampler.sample(weights, 0)
    return timed(lambda: sampler.sample(None, 0), rounds)


def sampling_on_ray(config: ImpalaConfig, weights: dict, count: int, rounds: int
                    ) -> list[float]:
    """Seconds per batch delivered to the driver, with `count` actors kept busy."""
    pool = RaySamplers("impala", "CartPole-v1", config.to_dict(), 0, count)
    pool.publish(weights, 0)
    for index in range(count):
        for _ in range(pool.depth):
            pool.request(index)

    def one() -> None:
        index, _ = pool.next()
        pool.request(index)

    try:
        return timed(one, rounds, warmup=2 * count + 2)
    finally:
        pool.close()


def empty_call(config: ImpalaConfig, rounds: int) -> float:
    """Median round trip of an empty call to a Ray sampler (its `pid`), Ray's floor per call
    (s)."""
    pool = RaySamplers("impala", "CartPole-v1", config.to_dict(), 0, 1)
    actor = pool.actors[0]
    try:
        return statistics.median(timed(lambda: pool.ray.get(actor.pid.remote()), rounds))
    finally:
        pool.close()


def delivered(config: ImpalaConfig, weights: dict, rollouts: int, batches: int
              ) -> tuple[float, float]:
    """One Ray sampler kept busy (2 requests of `rollouts` batches in flight), new weights
    published after every batch as a learner does: seconds per batch delivered to the
    driver, and the mean sampling time per batch inside the actor over the same batches."""
    pool = RaySamplers("impala", "CartPole-v1", config.to_dict(), 0, 1, rollouts=rollouts)
    pool.publish(weights, 0)
    for _ in range(pool.depth * rollouts):
        pool.request(0)

    def run(count: int, version: int) -> list[float]:
        inside = []
        for _ in range(count):
            _, result = pool.next()
            inside.append(result["sample_seconds"])
            version += 1
            pool.publish(weights, version)  # a new version each batch: weights travel
            pool.request(0)
        return inside

    try:
        run(2 * pool.depth * rollouts + 2, 0)  # warm-up
        start = time.perf_counter()
        inside = run(batches, 10**6)
        return (time.perf_counter() - start) / batches, statistics.mean(inside)
    finally:
        pool.close()


def training(exe, pool, rounds: int) -> list[float]:
    learner = Learner(Impala().distributed(), exe, exe.graph.root.config, pool, 0,
                      lambda version: keys_for(0, None, version))
    version = [0]

    def one() -> None:
        learner.step(version[0])
        version[0] += 1

    try:
        return timed(one, rounds, warmup=5)
    finally:
        pool.close()


def learner_only(exe, config: ImpalaConfig, weights: dict, rounds: int) -> list[float]:
    sampler = Sampler("impala", "CartPole-v1", config.to_dict(), 0, 0, 1)
    batch = sampler.sample(weights, 0)["batch"]
    inputs = [batch[name] for name in ("obs", "action", "reward", "done",
                                       "behaviour_log_prob", "last_obs")]
    return timed(lambda: jax.block_until_ready(exe.learn(*inputs)), rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--rollouts", type=int, default=8,
                        help="batches per request for the goal line of the transport")
    args = parser.parse_args()
    connect(num_cpus=2)  # before XLA starts its threads
    config = ImpalaConfig(num_envs=args.envs, num_steps=args.steps)
    batch = args.envs * args.steps
    exe = xla.lower(Impala().build("CartPole-v1", config, 10**6, 1), seed=0)
    weights = exe.get_states("impala_agent/policy")
    print(f"IMPALA on CartPole-v1, batch {args.envs} envs x {args.steps} steps = {batch} "
          f"steps, median of {args.rounds}\n")

    local_times = sampling_in_process(config, weights, 4 * args.rounds)
    local = rate(batch, local_times)
    ray1 = rate(batch, sampling_on_ray(config, weights, 1, args.rounds))
    ray2 = rate(batch, sampling_on_ray(config, weights, 2, args.rounds))
    print("sampling only (env steps/s)")
    print(f"  in process, 1 sampler   {local:12,.0f}")
    print(f"  Ray, 1 sampler          {ray1:12,.0f}   {ray1 / local:.2f}x in process")
    print(f"  Ray, 2 samplers         {ray2:12,.0f}   {ray2 / local:.2f}x in process")

    per_batch = statistics.mean(local_times)  # a mean, as the kept-busy figures below
    print(f"\nRay's transport: one Ray sampler, batch {batch} steps, sampling in process "
          f"{1e3 * per_batch:.2f} ms per batch (mean of {len(local_times)})")
    print(f"  an empty call's round trip (Ray's floor per call): "
          f"{1e3 * empty_call(config, args.rounds):.2f} ms")
    for rollouts in sorted({1, args.rollouts, 16}):
        wall, inside = delivered(config, weights, rollouts, 4 * max(args.rounds, rollouts))
        print(f"  kept busy, {rollouts:2d} batches per request: {1e3 * wall:.2f} ms per batch "
              f"delivered, {1e3 * inside:.2f} ms sampling in the actor; Ray's overhead "
              f"{100 * (wall - inside) / inside:5.1f}% of the actor's sampling, "
              f"{100 * (wall - per_batch) / per_batch:5.1f}% of sampling in process"
              + (" (goal <= 10%)" if rollouts == args.rollouts else ""))

    learn = rate(batch, learner_only(exe, config, weights, args.rounds))
    in_process = rate(batch, training(
        exe, LocalSamplers("impala", "CartPole-v1", config.to_dict(), 0, 1), args.rounds))
    train1 = rate(batch, training(
        exe, RaySamplers("impala", "CartPole-v1", config.to_dict(), 0, 1), args.rounds))
    train2 = rate(batch, training(
        exe, RaySamplers("impala", "CartPole-v1", config.to_dict(), 0, 2), args.rounds))
    print("\ntraining (env steps/s consumed by the learner)")
    print(f"  learner updates alone   {learn:12,.0f}")
    print(f"  in process, 1 sampler   {in_process:12,.0f}")
    print(f"  Ray, 1 sampler          {train1:12,.0f}   {train1 / in_process:.2f}x in process")
    print(f"  Ray, 2 samplers         {train2:12,.0f}   {train2 / in_process:.2f}x in process")

    print("\nprojection: min(K x one Ray sampler's delivered rate, learner rate), one core each")
    for k in (16, 64, 256):
        sampled = k * ray1
        bound = "learner" if sampled > learn else "samplers"
        print(f"  K={k:<4d} {min(sampled, learn):14,.0f} steps/s   bound by the {bound}")
    print(f"  the learner becomes the bottleneck from K = {int(np.ceil(learn / ray1))} "
          f"samplers")


if __name__ == "__main__":
    main()
