"""`GameEnvironment`: a batch of self-play games as an agent's environment component, with the
`Environment` component's `reset(key)` / `step(action)` APIs (so a `Rollout` steps it and it is
a node of the agent's graph), over the native in-graph door (`SelfPlay`).

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

import metagraph as mg
from components.envs.engine.step_result import StepResult
from components.envs.games.self_play import SelfPlay
from metagraph.spaces import Bool, Box, Discrete, Record


def agent_observation(planes: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """float32[..., obs_dim + num_actions]: `planes` [..., rows, columns, planes] (or already
    flat) flattened, then `legal_action_mask` [..., num_actions] as 0/1."""
    lead = legal_action_mask.shape[:-1]
    flat = jnp.reshape(planes, lead + (-1,)).astype(jnp.float32)
    return jnp.concatenate([flat, legal_action_mask.astype(jnp.float32)], -1)


def split_observation(obs: jax.Array, num_actions: int) -> tuple[jax.Array, jax.Array]:
    """`agent_observation`'s inverse: (the flat planes, the legal mask as bool)."""
    return obs[..., :-num_actions], obs[..., -num_actions:] > 0.5


class GameEnvironment(mg.Component):
    """`num_envs` games of `env_id` (a two-player game: "ConnectFour-v0", "Othello-v0",
    "Hex-v0" or a user's) played by one agent for both sides (see the module docstring).

    Args:
        env_id: the game.
        num_envs: games stepped at once.
        num_threads: C++ threads stepping them inside the program (None: every core).
        name: the scope name (default "game_environment").
    """

    def __init__(self, env_id: str, num_envs: int, num_threads: int | None = None,
                 name: str | None = None):
        super().__init__(name)
        self.games = SelfPlay(env_id, num_threads)
        self.env_spec = self.games.door.env_spec
        if self.env_spec.num_players != 2:
            raise ValueError(f"GameEnvironment: {self.env_spec.env_id} is a game of "
                             f"{self.env_spec.num_players} players; one policy playing every "
                             f"side with the mover's value negated (self-play, AlphaZero) "
                             f"takes two-player zero-sum games")
        self.num_envs = num_envs

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

    def _step_space(self) -> Record:
        n, size = self.num_envs, self.observation_space.shape
        return Record(StepResult, obs=Box((n, *size)), reward=Box((n,)),
                      terminated=Bool((n,)), truncated=Bool((n,)), final_obs=Box((n, *size)))

    def check_state(self, state: dict) -> None:
        """Games' state set from outside a call (a checkpoint, `set_state`) must be one reset
        and step could produce: a forged one is refused here, naming the game, before the
        executor's state is donated (as the `Environment` component does)."""
        if "env_state" in state:
            self.games.door.check_state(state["env_state"])

    def _env_state(self) -> jax.Array:
        return self.get_state("env_state",
                              lambda key: self.games.door.reset(key, self.num_envs)[0])

    def env_state(self) -> jax.Array:
        """The games' in-graph state now, uint32[W, num_envs, 2] (inside an API: what a
        search steps from, `components.search.GameSearch`). A method, not an API."""
        return self._env_state()

    @mg.api(outputs=lambda self: Box((self.num_envs, *self.observation_space.shape)))
    def reset(self, key):
        """Start `num_envs` games (player 0 to move); their observations."""
        self._env_state()
        state = self.games.init(key, self.num_envs)
        self.set_state("env_state", state.env_state)
        return agent_observation(state.observation, state.legal_action_mask)

    @mg.api(inputs={"action": lambda self: Discrete(self.num_actions,
                                                    shape=(self.num_envs,))},
            outputs=lambda self: self._step_space())
    def step(self, action):
        """One move in every game by its player to move (an illegal action fails the call,
        naming its index): a `StepResult` with `obs`, `reward` (the mover's), `terminated`,
        `truncated` and `final_obs` (the position the move reached, before a new game
        began); `state` None (it is the component's)."""
        out = self.games.door.step(self._env_state(), action, final_obs=True, legal_mask=True)
        self.set_state("env_state", out.state)
        no_moves = jnp.zeros((self.num_envs, self.num_actions), jnp.bool_)
        return out._replace(state=None, obs=agent_observation(out.obs, out.legal_mask),
                            final_obs=agent_observation(out.final_obs, no_moves),
                            legal_mask=None)
