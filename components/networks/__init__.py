"""Networks from dm-haiku as components: `MLP`, `CNN` (MinAtar's, Atari's Nature CNN),
`ImpalaCNN` (IMPALA's residual torso), `LSTM` (recurrent state as component
state), `QEnsemble` (several Q-networks, SAC's twin critics), `PolicyValueNetwork` (AlphaZero's
policy and value heads over a board), and `HaikuNetwork` to wrap any
haiku function."""

from components.networks.cnn import CNN
from components.networks.haiku_network import HaikuNetwork
from components.networks.impala_cnn import ImpalaCNN
from components.networks.lstm import LSTM
from components.networks.mlp import MLP
from components.networks.policy_value_network import PolicyValueNetwork
from components.networks.q_ensemble import QEnsemble

__all__ = ["CNN", "HaikuNetwork", "ImpalaCNN", "LSTM", "MLP", "PolicyValueNetwork", "QEnsemble"]
