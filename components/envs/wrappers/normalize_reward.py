"""`NormalizeReward`: rewards divided by the running standard deviation of each environment's
discounted return, then clipped; the task's own rewards kept beside them."""

from __future__ import annotations

from typing import Any

from components.envs.wrappers.wrapper import EnvironmentWrapper
from components.preprocessing import RewardNormaliser
from metagraph.spaces import Box, Space

TASK_REWARD = "task_reward"
"""The name under which a wrapper that changes rewards keeps the task's own in a step's
`extras`: the episode returns an agent reports (`components.agents.Rollout`) are the task's."""


class NormalizeReward(EnvironmentWrapper):
    """`env` with its rewards scaled as Gymnasium's vector `NormalizeReward` followed by
    `TransformReward(np.clip)` (CleanRL's continuous-control PPO; PureJaxRL's
    `NormalizeVecReward`): at each step the discounted return of every environment
    G <- gamma * G + r, its running moments updated with the `num_envs` returns, the reward
    divided by sqrt(var + epsilon) and clipped to [-clip, clip], and G reset to 0 where the
    episode ended (terminated or truncated: see `RewardNormaliser`).

    A step's `extras` keep the task's own rewards under "task_reward" (`TASK_REWARD`; the
    innermost wrapper's where several change rewards), so that the returns an agent reports
    are the task's, not the scaled ones.

    Its state is its `reward_normaliser`'s (a `RewardNormaliser`: the returns `return` [N] and
    their `mean`, `var`, `count`).

    Args:
        env: the environment (see `EnvironmentWrapper`).
        gamma: the discount of the return whose scale is tracked (the agent's).
        clip: the bound of the scaled rewards (None: no clipping).
        epsilon: added to the variance before its square root (Gymnasium's 1e-8).
        name: the scope name (default "normalize_reward").

    Raises:
        ValueError: `gamma`, `clip` or `epsilon` are bad (`RewardNormaliser`).
    """

    def __init__(self, env: Any, gamma: float = 0.99, clip: float | None = 10.0,
                 epsilon: float = 1e-8, name: str | None = None):
        super().__init__(env, name)
        self.reward_normaliser = RewardNormaliser(gamma, clip=clip, epsilon=epsilon)

    def step_result(self, out: Any) -> Any:
        """The step with its rewards scaled and the task's kept in `extras`."""
        out = super().step_result(out)
        done = out.terminated | out.truncated
        scaled = self.reward_normaliser.scale(out.reward, done)
        extras = dict(out.extras or {})
        extras.setdefault(TASK_REWARD, out.reward)
        return out._replace(reward=scaled, extras=extras)

    def extras_spaces(self) -> dict[str, Space]:
        """The task's rewards, [num_envs] float32."""
        return {TASK_REWARD: Box((self.num_envs,))}
