"""Agents composed from the component library, each with a typed config: `ReweightAgent`
(path reweighting), `PPOAgent`, `DQNAgent`, `SACAgent` and `ImpalaAgent`; `AgentConfig` is the
base of every config (from a dict with unknown keys refused, and back), `AgentSettings` the
settings every built-in config shares (door, env_kwargs, learning_rate, max_grad_norm, hidden)
and `ConvolutionSettings` those with a CNN (PPO's, DQN's). Every agent that steps
environments does so through a `Rollout` part, which returns a `Trajectory` (in games against
other players, a `SelfPlayRollout`, whose trajectory marks the learner's moves).
`components.training` runs them (and a user's own) into run directories."""

from components.agents.agent_settings import AgentSettings, ConvolutionSettings
from components.agents.config_checks import AgentConfig
from components.agents.dqn_agent import DQNAgent
from components.agents.dqn_config import DQNConfig
from components.agents.impala_agent import ImpalaAgent
from components.agents.impala_config import ImpalaConfig
from components.agents.ppo_agent import PPOAgent
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig
from components.agents.rollout import Rollout, Trajectory
from components.agents.sac_agent import SACAgent
from components.agents.sac_config import SACConfig
from components.agents.self_play_rollout import SelfPlayRollout

__all__ = ["AgentConfig", "AgentSettings", "ConvolutionSettings", "DQNAgent", "DQNConfig",
           "ImpalaAgent", "ImpalaConfig", "PPOAgent", "PPOConfig", "ReweightAgent",
           "ReweightConfig", "Rollout", "SACAgent", "SACConfig", "SelfPlayRollout", "Trajectory"]
