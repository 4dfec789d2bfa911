"""Networks from dm-haiku as components: `MLP`, `CNN`, `LSTM` (recurrent state as component
state), and `HaikuNetwork` to wrap any haiku function."""

from components.networks.cnn import CNN
from components.networks.haiku_network import HaikuNetwork
from components.networks.lstm import LSTM
from components.networks.mlp import MLP

__all__ = ["CNN", "HaikuNetwork", "LSTM", "MLP"]
