"""SAC (`--algo sac`): the Soft Actor-Critic agent (`SACAgent`) trained in fused iterations
like PPO and DQN (`IterativeAlgorithm`), from the per-environment defaults shipped in
`components/agents/configs/sac.toml`."""

from __future__ import annotations

from components.agents.sac_agent import SACAgent
from components.agents.sac_config import SACConfig
from components.training.algorithms.iterative import IterativeAlgorithm


class SAC(IterativeAlgorithm):
    """Soft Actor-Critic with automatic entropy tuning (`SACAgent`); its rows also report the
    temperature `alpha` and the policy's `entropy` estimate. Override `agent` to give the agent
    other parts (`actor=`, `critic=`, `preprocessor=`, `loss=`, `optimizer=`)."""

    config_class = SACConfig
    agent_class = SACAgent
