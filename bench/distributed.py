"""Distributed sampling on Ray against the same agent in one process, and the cost of Ray's
transport per trajectory batch.

    pip install -e ".[ray]" && python bench/distributed.py [--envs 64] [--steps 64] [--rounds 40]

IMPALA on CartPole-v1, a batch of `envs` x `steps` environment steps (4096 by default):

1. Sampling only: environment steps per second of one `Sampler` called in this process, and of
   1 and 2 Ray sampler actors kept busy (two requests queued on each) by a driver that only
   collects batches.
2. Transport: one Ray sampler called synchronously; per batch, the round trip (submit with
   the weights' reference, sample, serialise, object store, fetch, deserialise) minus the
   sampling time measured inside the actor is Ray's overhead, reported as a share of the
   sampling time (goal: <= 10% at 4096 steps), at 1, 4 and 16 times the batch.
3. Training: environment steps per second consumed by the V-trace learner with its samplers
   in this process, and with 1 and 2 Ray samplers; the learner's own update rate alone.
4. A projection to 16, 64 and 256 samplers, each on its own core: min(K x the rate one Ray
   sampler delivers, the learner's update rate), which says where the learner becomes the
   bottleneck.

Every figure is the median over `rounds` batches after a warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import numpy as np

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


def timed(fn, rounds: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


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


def transport(config: ImpalaConfig, weights: dict, rounds: int) -> tuple[float, float]:
    """Median sampling time inside the actor and median overhead of Ray around it (s)."""
    pool = RaySamplers("impala", "CartPole-v1", config.to_dict(), 0, 1, depth=1)
    pool.publish(weights, 0)
    sampling, overhead = [], []
    try:
        for i in range(rounds + 3):
            start = time.perf_counter()
            pool.request(0)
            _, result = pool.next()
            total = time.perf_counter() - start
            if i >= 3:
                sampling.append(result["sample_seconds"])
                overhead.append(total - result["sample_seconds"])
    finally:
        pool.close()
    return statistics.median(sampling), statistics.median(overhead)


def training(exe, pool, rounds: int) -> list[float]:
    learner = Learner(Impala().distributed, exe, exe.graph.root.config, pool, 0,
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
    args = parser.parse_args()
    connect(num_cpus=2)  # before XLA starts its threads
    config = ImpalaConfig(num_envs=args.envs, num_steps=args.steps)
    batch = args.envs * args.steps
    exe = xla.lower(Impala().build("CartPole-v1", config, 10**6, 1), seed=0)
    weights = exe.get_states("impala_agent/policy")
    print(f"IMPALA on CartPole-v1, batch {args.envs} envs x {args.steps} steps = {batch} "
          f"steps, median of {args.rounds}\n")

    local = rate(batch, sampling_in_process(config, weights, args.rounds))
    ray1 = rate(batch, sampling_on_ray(config, weights, 1, args.rounds))
    ray2 = rate(batch, sampling_on_ray(config, weights, 2, args.rounds))
    print("sampling only (env steps/s)")
    print(f"  in process, 1 sampler   {local:12,.0f}")
    print(f"  Ray, 1 sampler          {ray1:12,.0f}   {ray1 / local:.2f}x in process")
    print(f"  Ray, 2 samplers         {ray2:12,.0f}   {ray2 / local:.2f}x in process")

    print("\ntransport per batch (one Ray sampler, synchronous)")
    for steps in (args.steps, 4 * args.steps, 16 * args.steps):
        sized = ImpalaConfig(num_envs=args.envs, num_steps=steps)
        sample_s, overhead_s = transport(sized, weights, args.rounds)
        print(f"  batch {args.envs * steps:7d} steps: sampling in the actor {1e3 * sample_s:7.2f} "
              f"ms, Ray's overhead {1e3 * overhead_s:6.2f} ms = {100 * overhead_s / sample_s:5.1f}%"
              f" of sampling" + (" (goal <= 10%)" if steps == args.steps else ""))

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
