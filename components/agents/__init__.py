"""Agents composed from the component library: `ReweightAgent` (path reweighting) with its
typed `ReweightConfig` and its trainer (`reweight_trainer.train`, `evaluate`)."""

from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig

__all__ = ["ReweightAgent", "ReweightConfig"]
