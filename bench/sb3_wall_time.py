"""Stable-Baselines3's wall time on the runs of docs/benchmarks.md's learning tables, as the
peer of `metagraph train ENV --algo ppo|sac`: the same environment, budget and settings
(rl-baselines3-zoo's where ours follow the zoo), the whole command timed (imports, training,
then a deterministic evaluation over 10 episodes).

SB3 needs PyTorch, which metagraph does not: run it from its own venv,

    python3.11 -m venv /tmp/sb3 && /tmp/sb3/bin/pip install torch stable-baselines3 \\
        "gymnasium[mujoco]" mujoco==4.0.0
    /tmp/sb3/bin/python bench/sb3_wall_time.py sac Pendulum-v1 --steps 20000
    /tmp/sb3/bin/python bench/sb3_wall_time.py ppo HalfCheetah-v5 --steps 100000

On a 2-core CPU the full budgets (1M steps of PPO, 300k of SAC on MuJoCo) take hours with SB3;
measure a shorter budget with `--steps` and say so next to the figure. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

START = time.perf_counter()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from stable_baselines3 import PPO, SAC  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402


def ppo_settings(env_id: str) -> tuple[dict, bool]:
    """SB3 PPO's keyword arguments for `env_id` and whether observations and rewards are
    normalised: the zoo's tuned HalfCheetah (as components/agents/configs/ppo.toml), else
    CleanRL's continuous-control PPO (ppo.toml's mujoco group)."""
    if env_id.startswith("HalfCheetah"):
        return dict(n_steps=512, batch_size=64, n_epochs=20, learning_rate=2.0633e-5,
                    gamma=0.98, gae_lambda=0.92, clip_range=0.1, ent_coef=0.000401762,
                    vf_coef=0.58096, max_grad_norm=0.8,
                    policy_kwargs=dict(log_std_init=-2, ortho_init=False,
                                       activation_fn=torch.nn.ReLU,
                                       net_arch=dict(pi=[256, 256], vf=[256, 256]))), True
    return dict(n_steps=2048, batch_size=64, n_epochs=10,
                learning_rate=lambda left: 3e-4 * left, gamma=0.99, gae_lambda=0.95,
                clip_range=0.2, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5), True


def sac_settings(env_id: str) -> dict:
    """SB3 SAC's keyword arguments for `env_id` (rl-baselines3-zoo's hyperparams/sac.yml)."""
    if env_id.startswith("Pendulum"):
        return dict(learning_rate=1e-3)
    return dict(learning_starts=10_000)  # MuJoCo: 256-256, batch 256, buffer 1M (defaults)


def evaluate(model, env_id: str, normaliser: VecNormalize | None, episodes: int,
             seed: int) -> tuple[float, float]:
    """Mean and standard deviation of `episodes` deterministic episodes' returns."""
    env = gym.make(env_id)
    returns = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + 1000 + episode)
        done, total = False, 0.0
        while not done:
            seen = normaliser.normalize_obs(obs) if normaliser is not None else obs
            action, _ = model.predict(seen, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns)), float(np.std(returns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algo", choices=["ppo", "sac"])
    parser.add_argument("env_id")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch's CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    normaliser = None
    if args.algo == "ppo":
        kwargs, normalise = ppo_settings(args.env_id)
        env = make_vec_env(args.env_id, n_envs=1, seed=args.seed)
        if normalise:
            env = normaliser = VecNormalize(env, gamma=kwargs["gamma"])
        model = PPO("MlpPolicy", env, seed=args.seed, device="cpu", **kwargs)
    else:
        model = SAC("MlpPolicy", gym.make(args.env_id), seed=args.seed, device="cpu",
                    **sac_settings(args.env_id))
    learn_start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    training = time.perf_counter() - learn_start
    if normaliser is not None:
        normaliser.training = False
    mean, std = evaluate(model, args.env_id, normaliser, args.episodes, args.seed)
    print(json.dumps({"algo": args.algo, "env": args.env_id, "steps": args.steps,
                      "seed": args.seed, "training_seconds": round(training, 1),
                      "wall_seconds": round(time.perf_counter() - START, 1),
                      "steps_per_second": round(args.steps / training, 1),
                      "evaluation_mean": round(mean, 1), "evaluation_std": round(std, 1),
                      "threads": args.threads, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
