"""`evaluate`: the policy of a run directory's checkpoint (`load`), acting through the
algorithm's `evaluation_api` (`greedy` for the built-in ones; `act` when stochastic), over
whole episodes of the environment it trained on (the native host pool, or Gymnasium's for the
"gymnasium" door)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium.vector import AutoresetMode

from components.envs import make
from components.envs.engine.catalogue import scored_kwargs
from components.envs.wrappers import host_environment, outermost_wrapper
from components.training.algorithm import AlgorithmBase, env_kwargs_of
from components.training.evaluation.loading import TrainedAgent, load
from components.training.run.executors import lower


def evaluate(out: str | Path | TrainedAgent, episodes: int = 100, seed: int = 12345,
             algo: str | AlgorithmBase | None = None, trust_code: bool = False,
             deterministic: bool = True, executor: str = "xla") -> dict[str, Any]:
    """Mean and standard deviation of the return of the saved policy over `episodes`
    episodes: its algorithm's `evaluation_api` (greedy) actions, or sampled ones (`act`)
    with `deterministic=False`; with several seeds, also each seed's mean. `algo`,
    `trust_code`: as for `load` (a run naming a user's algorithm file imports it only when
    named again or trusted). `executor`: "xla", or "eager" (the whole agent op by op,
    `executors.py`). Raises LoadError when `out` is not a run directory with a checkpoint,
    AlgorithmError when its algorithm cannot be found again, UntrustedCodeError when its code
    is not named again or changed. `out` may also be an agent `load` gave."""
    agent = out if isinstance(out, TrainedAgent) else load(
        out, algo, trust_code, eval_envs=episodes if executor != "xla" else 1,
        executor=executor)
    env = host_environment(outermost_wrapper(agent.graph.root), vector_env(
        agent.env_id, agent.algorithm.door(agent.config), episodes, seed,
        env_kwargs_of(agent.config)))
    per_seed = [episode_returns(acting(policy, deterministic, executor), env, episodes, seed)
                for policy in agent.per_seed]
    returns = np.concatenate(per_seed)
    result: dict[str, Any] = {"episodes": episodes, "return_mean": float(returns.mean()),
                              "return_std": float(returns.std())}
    if len(per_seed) > 1:
        result["return_mean_per_seed"] = [float(r.mean()) for r in per_seed]
    return result


def acting(policy: TrainedAgent, deterministic: bool = True, executor: str = "xla"
           ) -> Callable[[np.ndarray], Any]:
    """`act(observations) -> actions` of one trained policy: `predict` (compiled, with only
    the state acting needs) under "xla"; the acting API of the whole agent's executor of the
    kind `executor` names otherwise (the eager one: op by op); either takes a batch of the
    environment's observations as it gives them (`TrainedAgent.acting_input`)."""
    if executor == "xla":
        return lambda obs: policy.predict(obs, deterministic)
    exe = policy.executor if policy.executor_name == executor else lower(
        policy.graph, executor, seed=policy.seed, state=policy.state)
    api = getattr(exe, policy.acting_api(deterministic))
    if deterministic:
        return lambda obs: api(policy.acting_input(obs)[0])
    keys = [jax.random.PRNGKey(policy.seed)]

    def sample(obs: np.ndarray) -> Any:
        keys[0], key = jax.random.split(keys[0])
        return api(policy.acting_input(obs)[0], np.asarray(key))

    return sample


def vector_env(env_id: str, door: str, num_envs: int, seed: int = 0,
               env_kwargs: dict[str, Any] | None = None) -> Any:
    """`num_envs` environments of task `env_id` made with keyword arguments `env_kwargs`
    behind `door`: the native host pool, or Gymnasium's own for the "gymnasium" door. The
    task is scored as it is: its registration's `scoring_kwargs` go over `env_kwargs` (an
    Atari game is played unclipped, a lost life no end)."""
    if door != "gymnasium":
        return make(env_id, num_envs, seed=seed, **scored_kwargs(env_id, env_kwargs or {}))
    return gymnasium.make_vec(env_id, num_envs, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
                              **(env_kwargs or {}))


def episode_returns(act: Callable[[np.ndarray], Any], env: Any, episodes: int,
                    seed: int) -> np.ndarray:
    """The return of one episode in each of `env`'s `episodes` environments, acting with
    `act(observations)`."""
    obs, _ = env.reset(seed=seed)
    returns = np.zeros(episodes)
    running = np.ones(episodes, bool)
    while running.any():
        obs, reward, terminated, truncated, _ = env.step(np.asarray(act(obs)))
        returns += reward * running
        running &= ~(terminated | truncated)
    return returns
