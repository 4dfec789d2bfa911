"""`QEnsemble`: several independent Q-networks over (observation, action), SAC's twin
critics."""

from __future__ import annotations

from collections.abc import Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from components.networks.haiku_network import HaikuNetwork


class QEnsemble(HaikuNetwork):
    """`critics` independent Q-networks (MLPs of the same widths) over x = concat(obs,
    action): `forward(x) -> Q [..., critics]` (SAC's twin critics with `critics=2`).

    Args:
        hidden: Each Q-network's hidden layer widths.
        critics: The number of Q-networks.
        activation: The activation between layers.
        name: The scope name.
    """
    def __init__(self, hidden: Sequence[int] = (256, 256), critics: int = 2,
                 activation=jax.nn.relu, name: str | None = None):
        super().__init__(name)
        if not hidden or any(not isinstance(h, int) or h < 1 for h in hidden):
            raise ValueError(f"QEnsemble: hidden must be positive ints, got {hidden!r}")
        if not isinstance(critics, int) or critics < 1:
            raise ValueError(f"QEnsemble: critics must be an int >= 1, got {critics!r}")
        self.hidden, self.critics, self.activation = tuple(hidden), critics, activation

    def network(self, x):
        """The Q-networks applied to `x` [..., d] -> [..., critics]."""
        return jnp.concatenate([hk.nets.MLP([*self.hidden, 1], activation=self.activation,
                                            name=f"q_{i}")(x) for i in range(self.critics)], -1)
