"""`MLP`: a multi-layer perceptron (haiku.nets.MLP) over the last axis."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from components.networks.haiku_network import HaikuNetwork


class MLP(HaikuNetwork):
    """A multi-layer perceptron (haiku.nets.MLP) over the last axis.

    With `orthogonal=(gain, output_gain)` the weights are initialised orthogonally
    (Saxe et al. 2014; `haiku.initializers.Orthogonal`), scaled by `gain` in the hidden layers
    and by `output_gain` in the last, biases at zero: the initialisation of continuous-control
    PPO (CleanRL, rl-baselines3-zoo: gains sqrt(2), and 0.01 for the policy's mean, 1 for the
    value). Without it, haiku's defaults (truncated normal, fan-in scaled).

    Args:
        sizes: The width of each layer, the last being the output's.
        activation: The activation between layers.
        activate_final: Also activate the output.
        orthogonal: `(gain, output_gain)` for an orthogonal initialisation, or None.
        input_rank: how many trailing axes one input has (1: vectors [..., d]; 3: planes
            [..., H, W, C], flattened first, bool planes as 0.0 and 1.0).
        name: The scope name.

    Raises:
        ValueError: `sizes` is empty or holds a size that is not a positive int, or
            `orthogonal` is not two numbers > 0, or `input_rank` is not a positive int.
    """
    def __init__(self, sizes: Sequence[int], activation: Callable = jax.nn.tanh,
                 activate_final: bool = False, orthogonal: tuple[float, float] | None = None,
                 input_rank: int = 1, name: str | None = None):
        super().__init__(name)
        if not sizes or any(not isinstance(s, int) or s < 1 for s in sizes):
            raise ValueError(f"MLP: sizes must be positive ints, got {sizes!r}")
        if orthogonal is not None and (
                len(orthogonal) != 2 or any(not isinstance(g, (int, float)) or isinstance(
                    g, bool) or not g > 0 for g in orthogonal)):
            raise ValueError(f"MLP: orthogonal must be (gain, output_gain), two numbers > 0, "
                             f"or None; got {orthogonal!r}")
        if not isinstance(input_rank, int) or isinstance(input_rank, bool) or input_rank < 1:
            raise ValueError(f"MLP: input_rank must be a positive int, got {input_rank!r}")
        self.input_rank = input_rank
        self.sizes, self.activation, self.activate_final = tuple(sizes), activation, \
            activate_final
        self.orthogonal = None if orthogonal is None else tuple(map(float, orthogonal))

    def network(self, x):
        """The MLP applied to `x` [..., d] -> [..., sizes[-1]] (`x` [..., *input] flattened
        first where `input_rank` > 1)."""
        if self.input_rank > 1:
            if x.ndim < self.input_rank:
                raise ValueError(f"MLP: expected inputs of {self.input_rank} axes at least "
                                 f"(input_rank), got shape {x.shape}")
            x = x.reshape(x.shape[:x.ndim - self.input_rank] + (-1,))
        if x.dtype == jnp.bool_:
            x = x.astype(jnp.float32)
        if self.orthogonal is None:
            return hk.nets.MLP(self.sizes, activation=self.activation,
                               activate_final=self.activate_final)(x)
        gain, output_gain = self.orthogonal
        last = len(self.sizes) - 1
        for i, size in enumerate(self.sizes):
            x = hk.Linear(size, w_init=hk.initializers.Orthogonal(
                output_gain if i == last else gain), name=f"linear_{i}")(x)
            if i < last or self.activate_final:
                x = self.activation(x)
        return x
