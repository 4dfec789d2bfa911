"""Wall time to train PPO on CartPole-v1 (4 envs x 128 steps, 5e5 steps, compile included):
metagraph's `metagraph train CartPole-v1 --algo ppo` path (trainer.train, writing its run
directory) against a hand-written PureJaxRL-style jax.jit PPO of the same hyperparameters
(bench/ppo_reference.py), and Stable-Baselines3's PPO where it is installed.

    python bench/train_speed.py [--steps 500000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppo_reference import make_train  # noqa: E402

from components.agents import PPOConfig, trainer  # noqa: E402


def ours(steps: int, seed: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        metrics = trainer.train("CartPole-v1", out, "ppo", PPOConfig(), seed=seed, steps=steps,
                                progress=False)
        wall = time.perf_counter() - start
        evaluation = trainer.evaluate(out, episodes=100)
    last = [m["episode_return_mean"] for m in metrics[-20:] if m["episode_return_mean"]]
    return wall, float(np.mean(last)), evaluation["return_mean"]


def hand_written(steps: int, seed: int) -> tuple[float, float]:
    start = time.perf_counter()
    _, returns, episodes = jax.block_until_ready(make_train(steps)(jax.random.PRNGKey(seed)))
    wall = time.perf_counter() - start
    returns, episodes = np.asarray(returns[-20:]), np.asarray(episodes[-20:])
    return wall, float(returns.sum() / max(episodes.sum(), 1))


def sb3(steps: int, seed: int) -> tuple[float, float] | str:
    try:
        from stable_baselines3 import PPO
    except ImportError:
        return "not installed"
    import gymnasium

    start = time.perf_counter()
    model = PPO("MlpPolicy", gymnasium.make("CartPole-v1"), n_steps=128, batch_size=128,
                n_epochs=4, learning_rate=2.5e-4, seed=seed, verbose=0)
    model.learn(steps)
    return time.perf_counter() - start, float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ours_wall, ours_return, ours_eval = ours(args.steps, args.seed)
    ref_wall, ref_return = hand_written(args.steps, args.seed)
    print(f"PPO on CartPole-v1, {args.steps} steps, seed {args.seed}, compile included")
    print(f"{'':>14} {'wall s':>8} {'final train return':>19}")
    print(f"{'metagraph':>14} {ours_wall:8.2f} {ours_return:19.1f}   "
          f"(greedy evaluation, 100 episodes: {ours_eval:.1f})")
    print(f"{'hand jax.jit':>14} {ref_wall:8.2f} {ref_return:19.1f}")
    peer = sb3(args.steps, args.seed)
    print(f"{'SB3':>14} {peer}" if isinstance(peer, str) else f"{'SB3':>14} {peer[0]:8.2f}")
    print(f"ratio metagraph / hand-written: {ours_wall / ref_wall:.2f} (goal <= 1.0)")


if __name__ == "__main__":
    main()
