"""`GameEnvironment`: a batch of self-play games as an agent's environment component: the
`Environment` component of a two-player game on its native door (its `reset(key)` /
`step(action)` APIs, so a `Rollout` steps it and it is a node of the agent's graph, and its
refusals: an illegal move is refused after the call, `mg.RuntimeCheckError`, with every game
as it was), observed as one policy playing both sides needs.

What the agent observes is `agent_observation`: the board planes from the view of the player
to move, flattened, then that player's legal-action mask as 0/1, float32[obs_dim +
num_actions]. A `MaskedPolicy` reads the mask off the end and gives illegal actions no
probability, so one policy plays both sides and every loss over observations (PPO's,
weighted maximum likelihood) sees the mask without being told. The reward of a step is the
mover's (`components.envs.games`'s conventions); a game that ends starts again in the same
step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from components.envs.environment import Environment
from components.envs.games.self_play import SelfPlay
from metagraph.spaces import Box, Discrete


def agent_observation(planes: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """float32[..., obs_dim + num_actions]: `planes` [..., rows, columns, planes] (or already
    flat) flattened, then `legal_action_mask` [..., num_actions] as 0/1."""
    lead = legal_action_mask.shape[:-1]
    flat = jnp.reshape(planes, lead + (-1,)).astype(jnp.float32)
    return jnp.concatenate([flat, legal_action_mask.astype(jnp.float32)], -1)


def split_observation(obs: jax.Array, num_actions: int) -> tuple[jax.Array, jax.Array]:
    """`agent_observation`'s inverse: (the flat planes, the legal mask as bool)."""
    return obs[..., :-num_actions], obs[..., -num_actions:] > 0.5


class GameEnvironment(Environment):
    """`num_envs` games of `env_id` (a two-player game: "ConnectFour-v0", "Othello-v0",
    "Hex-v0" or a user's) played by one agent for both sides (see the module docstring).

    Args:
        env_id: the game.
        num_envs: games stepped at once.
        num_threads: C++ threads stepping them inside the program (None: every core this
            process may run on, capped at `num_envs`).
        name: the scope name (default "game_environment").
    """

    def __init__(self, env_id: str, num_envs: int, num_threads: int | None = None,
                 name: str | None = None):
        self.games = SelfPlay(env_id, num_threads)
        players = self.games.num_players
        if players != 2:
            raise ValueError(f"GameEnvironment: {self.games.env_id} is a game of {players} "
                             f"players; one policy playing every side with the mover's value "
                             f"negated (self-play, AlphaZero) takes two-player zero-sum games")
        super().__init__(self.games.env_id, num_envs, door="native", num_threads=num_threads,
                         name=name)

    @property
    def num_actions(self) -> int:
        """Actions of the game."""
        return self.games.num_actions

    @property
    def observation_space(self) -> Box:
        """One game's `agent_observation` space."""
        size = int(np.prod(self.games.observation_shape)) + self.num_actions
        return Box((size,), np.float32, 0.0, 1.0)

    @property
    def action_space(self) -> Discrete:
        """One game's actions."""
        return Discrete(self.num_actions)

    def env_state(self) -> jax.Array:
        """The games' in-graph state now, uint32[W, num_envs, 2] (inside an API: what a
        search steps from, `components.search.GameSearch`). A method, not an API."""
        return self._env_state()

    def _observe(self, obs: jax.Array, legal: jax.Array | None) -> jax.Array:
        """The games' `agent_observation`: the mover's planes, then its legal moves (none in
        a game's last position)."""
        return agent_observation(self.games.planes(obs), legal)
