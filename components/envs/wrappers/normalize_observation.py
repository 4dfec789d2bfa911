"""`NormalizeObservation`: observations to zero mean and unit variance from the running moments
of every observation the environment gave, then clipped."""

from __future__ import annotations

from typing import Any

from components.envs.wrappers.wrapper import EnvironmentWrapper
from components.preprocessing import ObservationNormaliser
from metagraph.spaces import Box, Space


class NormalizeObservation(EnvironmentWrapper):
    """`env` observed through the running mean and variance of its observations, as
    Gymnasium's vector `NormalizeObservation` followed by `TransformObservation(np.clip)` (what
    CleanRL's and rl-baselines3-zoo's continuous-control PPO wrap their environments in, and
    PureJaxRL's `NormalizeVecObservation`): each `reset` and `step` first adds the
    observations it gives to the moments, then gives (obs - mean) / sqrt(var + epsilon)
    clipped to [-clip, clip], over the observation's last axis; a step's final observations
    are normalised with the same moments.

    Its state is its `observation_normaliser`'s (an `ObservationNormaliser`: `mean`, `var`,
    `count`). `observation(obs)` normalises without adding to the moments: what an agent
    applies to observations from elsewhere (an evaluation's), so the moments change while the
    environment is stepped, never while an agent acts on other observations or learns.

    Args:
        env: the environment (see `EnvironmentWrapper`), its observations a float Box.
        clip: the bound of the normalised observations (None: no clipping).
        epsilon: added to the variance before its square root (Gymnasium's 1e-8).
        name: the scope name (default "normalize_observation").

    Raises:
        ValueError: the observations are no float Box (a game's {"obs", "legal"}, bool planes,
            uint8 frames), or `clip`/`epsilon` are bad (`ObservationNormaliser`).
    """

    def __init__(self, env: Any, clip: float | None = 10.0, epsilon: float = 1e-8,
                 name: str | None = None):
        super().__init__(env, name)
        space = env.observation_space
        if not isinstance(space, Box) or space.dtype.kind != "f":
            raise ValueError(f"NormalizeObservation: the observations must be a float Box "
                             f"(vectors or images of floats), got {space}")
        self.observation_normaliser = ObservationNormaliser(clip=clip, epsilon=epsilon)

    @property
    def observation_space(self) -> Space:
        """The wrapped environment's, unbounded: normalised values, float32."""
        inner = self.env.observation_space
        return Box(inner.shape, inner.dtype)

    def observation(self, obs: Any) -> Any:
        """`obs` normalised with the current moments (not added to them)."""
        return self.observation_normaliser.forward(obs)

    def reset_observation(self, obs: Any) -> Any:
        """The first observations added to the moments, then normalised."""
        return self._counted(obs)

    def step_result(self, out: Any) -> Any:
        """A step's observations added to the moments, then its observations and final
        observations normalised."""
        return out._replace(obs=self._counted(out.obs), final_obs=self.observation(out.final_obs))

    def _counted(self, obs: Any) -> Any:
        """`obs` added to the moments, then normalised with them."""
        self.observation_normaliser.update(obs)
        return self.observation_normaliser.forward(obs)
