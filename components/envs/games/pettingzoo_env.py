"""One board game as a PettingZoo AEC environment (`pettingzoo.AECEnv`), over the engine's host
pool of one game: agents "player_0" (moves first) and "player_1", observations as PettingZoo's
classic games give them (`{"observation": int8[rows, columns, planes], "action_mask":
int8[num_actions]}`, planes from the observing agent's point of view: its own stones, the
opponent's, and for Hex a plane of ones when the observer is player 1; the mask is all zeros
for the agent not to move), +1/-1 to the winner/loser at the end (0 each for a draw).

    from components.envs.games.pettingzoo_env import GameEnv
    env = GameEnv("ConnectFour-v0", render_mode="ansi")
    env.reset(seed=0)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else choose(observation)
        env.step(action)

An illegal action raises the engine's ValueError ("ConnectFour-v0: action 3 at index 0 is not
legal in its state") and changes nothing. Requires the `pettingzoo` package.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from components.envs.engine.catalogue import canonical_id, num_players
from components.envs.engine.vector_env import VectorEnv

SYMBOLS = {-1: ".", 0: "x", 1: "o"}


class GameEnv(AECEnv):
    """A two-player game id ("ConnectFour-v0", "Othello-v0", "Hex-v0") as an AEC environment.

    Args:
        env_id: the game.
        render_mode: None, "ansi" (`render()` returns the board as text) or "human" (prints
            it).
    """

    metadata = {"render_modes": ["human", "ansi"], "name": "metagraph_games_v0",
                "is_parallelizable": False}

    def __init__(self, env_id: str = "ConnectFour-v0", render_mode: str | None = None):
        super().__init__()
        if num_players(env_id) != 2:
            raise ValueError(f"GameEnv: {env_id!r} is not a two-player game")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"GameEnv({env_id!r}): render_mode must be one of "
                             f"{self.metadata['render_modes']} or None, got {render_mode!r}")
        self.env_id = canonical_id(env_id)  # OpenSpiel's name too
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"metagraph_{self.env_id}"}
        self._game = VectorEnv(self.env_id, 1, seed=0, num_threads=1)
        self._shape = self._game.env_spec.planes
        if self._shape is None:
            raise ValueError(f"GameEnv({env_id!r}): its task declares no board planes (rows, "
                             f"columns and planes in its info), which the observation is")
        num_actions = int(self._game.single_action_space.n)
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        self._has_reset = False  # step, observe and render need a game: reset() makes one
        observation = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(0, 1, self._shape, np.int8),
            "action_mask": gymnasium.spaces.Box(0, 1, (num_actions,), np.int8),
        })
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = dict.fromkeys(self.possible_agents,
                                           gymnasium.spaces.Discrete(num_actions))

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        """The observation space of `agent` (the same for both)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        """The action space of `agent` (the same for both)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new game, player_0 to move (the games have no randomness: `seed` changes
        nothing)."""
        obs, _ = self._game.reset(seed=0 if seed is None else seed)
        self._remember(obs[0], viewer=0)
        self._mask = self._game.legal_mask()[0]
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[0]
        self._has_reset = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The board from `agent`'s point of view and its legal actions (none unless it is to
        move)."""
        self._require_reset("observe")
        index = self.possible_agents.index(agent)
        planes = [self._stones[..., index], self._stones[..., 1 - index]]
        if self._shape[2] == 3:
            planes.append(np.full(self._shape[:2], index, np.int8))
        to_move = agent == self.agent_selection and not (
            self.terminations.get(agent, True) or self.truncations.get(agent, True))
        mask = self._mask if to_move else np.zeros_like(self._mask)
        return {"observation": np.stack(planes, axis=-1),
                "action_mask": mask.astype(np.int8)}

    def step(self, action: Any) -> None:
        """The agent to move plays `action` (None once its game is over)."""
        self._require_reset("step")
        if not self.agents:
            raise RuntimeError(f"GameEnv({self.env_id}).step: the game is over and both agents "
                               f"have left; call reset() for another game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{self.env_id}: {agent} is to move; an action of None is only for "
                             f"an agent whose game is over")
        mover = self.possible_agents.index(agent)
        obs, _, terminated, truncated, info = self._game.step(np.asarray([action]))
        ended = bool(terminated[0] or truncated[0])
        self._remember(info["final_obs"][0] if ended else obs[0], viewer=1 - mover)
        self._mask = self._game.legal_mask()[0]
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {name: float(info[f"reward_player_{self.possible_agents.index(name)}"][0])
                        for name in self.agents}
        self.terminations = dict.fromkeys(self.agents, bool(terminated[0]))
        self.truncations = dict.fromkeys(self.agents, bool(truncated[0]))
        self.agent_selection = self.possible_agents[1 - mover]
        self._accumulate_rewards()
        if self.render_mode == "human":
            print(self.render())

    def render(self) -> str | None:
        """The board as text, row 0 at the top: x for player_0's stones, o for player_1's."""
        if self.render_mode is None:
            gymnasium.logger.warn("GameEnv.render: no render_mode was given")
            return None
        self._require_reset("render")
        owner = np.where(self._stones[..., 0] > 0, 0, np.where(self._stones[..., 1] > 0, 1, -1))
        return "\n".join(" ".join(SYMBOLS[int(v)] for v in row) for row in owner)

    def close(self) -> None:
        """Closes the game's pool."""
        self._game.close()

    def _require_reset(self, api: str) -> None:
        if not self._has_reset:
            raise RuntimeError(f"GameEnv({self.env_id}).{api}: no game yet; call reset() first")

    def _remember(self, obs: np.ndarray, viewer: int) -> None:
        """Keeps the board of an observation from `viewer`'s point of view as each player's
        stones, int8[rows, columns, 2] (plane k: player k's)."""
        planes = obs.reshape(self._shape).astype(np.int8)
        own, opponent = planes[..., 0], planes[..., 1]
        self._stones = np.stack([own, opponent] if viewer == 0 else [opponent, own], axis=-1)
