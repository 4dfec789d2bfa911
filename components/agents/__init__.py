"""Agents composed from the component library, each with a typed config: `ReweightAgent`
(path reweighting), `PPOAgent` and `DQNAgent`; `trainer.train` / `trainer.evaluate` run any of
them into a run directory."""

from components.agents.dqn_agent import DQNAgent
from components.agents.dqn_config import DQNConfig
from components.agents.ppo_agent import PPOAgent
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig

__all__ = ["DQNAgent", "DQNConfig", "PPOAgent", "PPOConfig", "ReweightAgent", "ReweightConfig"]
