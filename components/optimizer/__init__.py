"""`Optimizer`: an optax transformation minimising a target component's loss API."""

from components.optimizer.optimizer import Optimizer

__all__ = ["Optimizer"]
