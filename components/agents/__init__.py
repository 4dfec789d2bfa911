"""Agents composed from the component library, each with a typed config: `ReweightAgent`
(path reweighting) and `PPOAgent`; `trainer.train` / `trainer.evaluate` run any of them into a
run directory."""

from components.agents.ppo_agent import PPOAgent
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig

__all__ = ["PPOAgent", "PPOConfig", "ReweightAgent", "ReweightConfig"]
