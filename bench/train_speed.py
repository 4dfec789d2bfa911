"""Wall time to train PPO on CartPole-v1 (4 envs x 128 steps, 5e5 steps, compile included):
metagraph's `metagraph train CartPole-v1 --algo ppo` path (`components.training.trainer.train`,
writing its run directory) against a hand-written PureJaxRL-style jax.jit PPO of the same
hyperparameters (bench/ppo_reference.py), and Stable-Baselines3's PPO where it is installed
(`pip install "torch==2.13.0+cpu" stable-baselines3`).

    python bench/train_speed.py [--steps 500000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppo_reference import make_train  # noqa: E402

from components.agents import PPOConfig  # noqa: E402
from components.training import RunSpec, trainer  # noqa: E402
from components.training.evaluation import episodes as evaluation


def ours(steps: int, seed: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        spec = RunSpec.make("CartPole-v1", "ppo", PPOConfig(), seed=seed, steps=steps)
        metrics = trainer.train(spec, out, progress=False)
        wall = time.perf_counter() - start
        result = evaluation.evaluate(out, episodes=100)
    last = [m["episode_return_mean"] for m in metrics[-20:] if m["episode_return_mean"]]
    return wall, float(np.mean(last)), result["return_mean"]


def hand_written(steps: int, seed: int) -> tuple[float, float]:
    start = time.perf_counter()
    _, returns, episodes = jax.block_until_ready(make_train(steps)(jax.random.PRNGKey(seed)))
    wall = time.perf_counter() - start
    returns, episodes = np.asarray(returns[-20:]), np.asarray(episodes[-20:])
    return wall, float(returns.sum() / max(episodes.sum(), 1))


def sb3(steps: int, seed: int) -> tuple[float, float] | str:
    """Stable-Baselines3's PPO with the same hyperparameters (4 envs x 128 steps, 4 epochs of
    4 minibatches, linearly annealed Adam 2.5e-4, clip 0.2, GAE 0.95, entropy 0.01, value 0.5,
    max grad norm 0.5, 64-64 tanh networks) on Gymnasium's CartPole; torch on the CPU."""
    try:
        from stable_baselines3 import PPO
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.evaluation import evaluate_policy
    except ImportError:
        return "not installed"
    import torch

    torch.set_num_threads(2)
    start = time.perf_counter()
    env = make_vec_env("CartPole-v1", n_envs=4, seed=seed)
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=128, n_epochs=4,
                learning_rate=lambda progress: 2.5e-4 * progress, clip_range=0.2,
                gae_lambda=0.95, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5, seed=seed,
                device="cpu", verbose=0)
    model.learn(steps)
    wall = time.perf_counter() - start
    mean, _ = evaluate_policy(model, model.get_env(), n_eval_episodes=20, deterministic=True)
    return wall, float(mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["ours", "hand", "sb3"],
                        help="run one contender in this process and print JSON")
    args = parser.parse_args()
    if args.only:
        if args.only != "sb3":
            # torch is here for SB3 only; tensorboardX would import it when present (1 s)
            sys.modules["torch"] = None
        result = {"ours": ours, "hand": hand_written, "sb3": sb3}[args.only](args.steps,
                                                                             args.seed)
        print(json.dumps(result))
        return
    # each contender in a fresh interpreter: first-time costs (JAX's backend start, imports
    # inside the libraries) count for everyone, as they do on the command line
    results = {}
    for name in ("ours", "hand", "sb3"):
        out = subprocess.run([sys.executable, __file__, "--only", name, "--steps",
                              str(args.steps), "--seed", str(args.seed)],
                             capture_output=True, text=True, check=True)
        results[name] = json.loads(out.stdout.strip().splitlines()[-1])
    (ours_wall, ours_return, ours_eval), (ref_wall, ref_return) = results["ours"], results["hand"]
    print(f"PPO on CartPole-v1, {args.steps} steps, seed {args.seed}, compile included, each "
          f"in a fresh process")
    print(f"{'':>14} {'wall s':>8} {'final train return':>19}")
    print(f"{'metagraph':>14} {ours_wall:8.2f} {ours_return:19.1f}   "
          f"(greedy evaluation, 100 episodes: {ours_eval:.1f})")
    print(f"{'hand jax.jit':>14} {ref_wall:8.2f} {ref_return:19.1f}")
    peer = results["sb3"]
    print(f"{'SB3':>14} {peer}" if isinstance(peer, str) else
          f"{'SB3':>14} {peer[0]:8.2f}   (greedy evaluation, 20 episodes: {peer[1]:.1f})")
    print(f"ratio metagraph / hand-written: {ours_wall / ref_wall:.2f} (goal <= 1.0)")


if __name__ == "__main__":
    main()
