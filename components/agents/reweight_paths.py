"""What a path is to `ReweightAgent`, chosen once from the task (`paths_of`): the agent's code
is the same for every task, its path source says how paths are sampled and scored.

- `EpisodePaths`, a task of one player: each of the N paths is one episode from a reset, the
  current policy's, q(p) by the config's `quality` ("return", "max_height",
  "return_and_height") or the user's function of the paths.
- `GamePaths` (`components.agents.reweight_games`), a two-player game: each path is one whole
  game against the current or an earlier policy, q(p) its outcome for the learner.

A source makes the parts that depend on it (`rollout`, `pool`, `searcher`); the agent keeps
them as its own sub-components, so their state has the same names whichever source made them.
"""

from __future__ import annotations

from typing import Any

import jax

import metagraph as mg
from components.agents.preprocessing import preprocess
from components.agents.reweight_games import GamePaths, check_quality, on_path
from components.agents.rollout import Rollout
from components.reweighting import quality


class EpisodePaths:
    """The paths of a task of one player (see the module docstring)."""

    def check_quality(self, name: str, env_id: str, env_spec: Any) -> None:
        """A ValueError where the quality `name` scores a game's outcome, not a path."""
        check_quality(name, env_id, env_spec, self_play=False)

    def rollout(self, env: mg.Component) -> Rollout:
        """The agent's rollout over `env`."""
        return Rollout(env)

    def pool(self, env: mg.Component, config: Any) -> list[mg.Component]:
        """No earlier policies: a task of one player has no opponent."""
        return []

    def searcher(self, agent: mg.Component, env_id: str) -> None:
        """A ValueError: the search plays a game's moves."""
        raise ValueError(f"ReweightAgent: search_simulations searches a game's moves; "
                         f"{env_id} is not a game")

    def sample(self, agent: mg.Component, reset_key: jax.Array,
               key: jax.Array) -> tuple[dict[str, Any], jax.Array]:
        """One episode in each of the agent's N environments from a reset, each step an
        `env.step` call of the rollout: paths [N, T, ...] (the environments' observations)
        with their mask (1 up to and including the step that ended the episode), and their
        qualities q(p)."""
        agent.rollout.reset(reset_key)

        def act(obs, step_key):
            seen = preprocess(agent.preprocessor, obs, update=True)
            return agent.policy.sample_action(seen, step_key)[0], ()

        trajectory = agent.rollout.run(act, key, agent.horizon)
        mask = on_path(trajectory.done)
        paths = {"obs": trajectory.observations.swapaxes(0, 1),
                 "action": trajectory.actions.swapaxes(0, 1),
                 "reward": trajectory.rewards.swapaxes(0, 1), "mask": mask.swapaxes(0, 1)}
        return paths, agent.scored(paths, lambda: self.quality(
            agent.config.quality, paths["reward"], paths["obs"], paths["mask"]))

    @staticmethod
    def quality(name: str, reward: jax.Array, obs: jax.Array, mask: jax.Array) -> jax.Array:
        """q(p) by the config's name: the path's return, the highest first coordinate of its
        observations (MountainCar's position: "max_height") or the return plus 100 times that
        ("return_and_height")."""
        ret = quality.path_return(reward, mask)
        if name == "return":
            return ret
        height = quality.max_over_path(obs[..., 0], mask)  # MountainCar: the position
        return height if name == "max_height" else ret + 100.0 * height


def paths_of(env: mg.Component) -> EpisodePaths | GamePaths:
    """The path source for the task `env` steps: `GamePaths` for a game (its task declares two
    players), `EpisodePaths` otherwise."""
    players = int(getattr(getattr(env, "env_spec", None), "num_players", 1))
    return GamePaths() if players > 1 else EpisodePaths()


__all__ = ["EpisodePaths", "paths_of"]
