"""`MLP`: a multi-layer perceptron (haiku.nets.MLP) over the last axis."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import haiku as hk
import jax

from components.networks.haiku_network import HaikuNetwork


class MLP(HaikuNetwork):
    """A multi-layer perceptron (haiku.nets.MLP) over the last axis.

    Args:
        sizes: The width of each layer, the last being the output's.
        activation: The activation between layers.
        activate_final: Also activate the output.
        name: The scope name.

    Raises:
        ValueError: `sizes` is empty or holds a size that is not a positive int.
    """
    def __init__(self, sizes: Sequence[int], activation: Callable = jax.nn.tanh,
                 activate_final: bool = False, name: str | None = None):
        super().__init__(name)
        if not sizes or any(not isinstance(s, int) or s < 1 for s in sizes):
            raise ValueError(f"MLP: sizes must be positive ints, got {sizes!r}")
        self.sizes, self.activation, self.activate_final = tuple(sizes), activation, \
            activate_final

    def network(self, x):
        """The MLP applied to `x` [..., d] -> [..., sizes[-1]]."""
        return hk.nets.MLP(self.sizes, activation=self.activation,
                           activate_final=self.activate_final)(x)
