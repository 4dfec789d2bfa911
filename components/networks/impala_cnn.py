"""`ImpalaCNN`: the residual network of IMPALA (Espeholt et al. 2018), the torso of CleanRL's
and Cleanba's Atari and Procgen agents: three stages of a 3x3 convolution, a 3x3 max-pool of
stride 2 and two residual blocks, then a dense ReLU layer."""

from __future__ import annotations

from collections.abc import Sequence

import haiku as hk
import jax

from components.networks.cnn import CNN, PatchConv2D


class ImpalaCNN(CNN):
    """IMPALA's residual torso over images (see the module docstring): for each of `channels`
    a 3x3 convolution ("SAME"), a 3x3 max-pool of stride 2 ("SAME") and two residual blocks
    (ReLU, 3x3 convolution, ReLU, 3x3 convolution, added to the block's input); then ReLU,
    flattened, and the dense ReLU layers of `hidden`. Inputs as `CNN` takes them (bytes scaled
    by 1/255, flat with `input_shape`, `channels_first` for Atari's stacked frames).

    Args:
        channels: each stage's channels (IMPALA's: 16, 32, 32).
        hidden: the dense layers after the stages (IMPALA's: 256).
        input_shape: as `CNN`'s (the shape of one image when observations come flat).
        outputs: as `CNN`'s (a last linear layer's width, or None).
        channels_first: as `CNN`'s (images [..., C, H, W]).
        name: the scope name.
    """

    def __init__(self, channels: Sequence[int] = (16, 32, 32), hidden: Sequence[int] = (256,),
                 input_shape: tuple[int, int, int] | None = None, outputs: int | None = None,
                 channels_first: bool = False, name: str | None = None):
        super().__init__(channels, kernel=3, stride=1, hidden=hidden, input_shape=input_shape,
                         outputs=outputs, name=name, channels_first=channels_first)

    def convolutions(self, h):
        """Images [B, H, W, C] to the last stage's feature maps, after its ReLU."""
        for c in self.channels:
            h = PatchConv2D(c, 3)(h)
            h = hk.max_pool(h, window_shape=(1, 3, 3, 1), strides=(1, 2, 2, 1), padding="SAME")
            for _ in range(2):
                block = PatchConv2D(c, 3)(jax.nn.relu(h))
                h = h + PatchConv2D(c, 3)(jax.nn.relu(block))
        return jax.nn.relu(h)


__all__ = ["ImpalaCNN"]
