"""`CNN`: a small convolutional torso for image observations [..., H, W, C] (uint8 images are
scaled to [0, 1]), flattened into an MLP head."""

from __future__ import annotations

from collections.abc import Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from components.networks.haiku_network import HaikuNetwork


class CNN(HaikuNetwork):
    """Convolutions with ReLU, flattened into a dense ReLU layer; integer images are scaled by
    1/255.

    Args:
        channels: The output channels of each convolution.
        kernel: The kernel size of every convolution.
        stride: The stride of every convolution.
        output_size: The width of the final dense layer.
        name: The scope name.
    """
    def __init__(self, channels: Sequence[int] = (16, 32), kernel: int = 3, stride: int = 2,
                 output_size: int = 64, name: str | None = None):
        super().__init__(name)
        self.channels, self.kernel, self.stride, self.output_size = tuple(channels), kernel, \
            stride, output_size

    def network(self, x):
        """Images [..., H, W, C] to features [..., output_size]; any leading axes are kept."""
        if x.ndim < 3:
            raise ValueError(f"CNN: expected images [..., H, W, C], got shape {x.shape}")
        if jnp.issubdtype(x.dtype, jnp.integer):
            x = x.astype(jnp.float32) / 255.0
        lead = x.shape[:-3]
        h = x.reshape((-1,) + x.shape[-3:])
        for c in self.channels:
            h = jax.nn.relu(hk.Conv2D(c, self.kernel, stride=self.stride)(h))
        h = h.reshape(h.shape[0], -1)
        h = jax.nn.relu(hk.Linear(self.output_size)(h))
        return h.reshape(lead + (self.output_size,))
