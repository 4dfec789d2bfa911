"""`CNN`: a convolutional torso for image observations [..., H, W, C] or [..., C, H, W] (uint8
images are scaled to [0, 1]; flat observations are reshaped to their planes when told them),
flattened into dense ReLU layers: MinAtar's small network, Atari's Nature CNN
(`CNN.nature()`)."""

from __future__ import annotations

from collections.abc import Sequence

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np

from components.networks.haiku_network import HaikuNetwork


class PatchConv2D(hk.Module):
    """`haiku.Conv2D` (NHWC, "SAME" or "VALID" padding, the same parameters `w` [k, k, C, O]
    and `b` [O] and initialisation) computed as one matrix product of the image's k x k
    patches with `w`.

    The same function as a convolution; on XLA's CPU backend its gradient inside a loop (PPO's
    minibatch scan) is about 3.6x faster than the convolution's (10x10x4 planes, 16 channels:
    16.5 against 60 us a sample, docs/benchmarks.md), since a product of matrices is what that
    backend does best.
    """
    def __init__(self, output_channels: int, kernel: int, stride: int = 1,
                 padding: str = "SAME", name: str = "conv2_d"):
        super().__init__(name=name)
        self.output_channels, self.kernel, self.stride = output_channels, kernel, stride
        self.padding = padding

    def __call__(self, x):
        """[B, H, W, C] -> [B, H', W', output_channels]: H' = ceil(H / stride) ("SAME"),
        (H - kernel) // stride + 1 ("VALID")."""
        k, s, channels = self.kernel, self.stride, x.shape[-1]
        fan_in = k * k * channels
        w = hk.get_parameter("w", (k, k, channels, self.output_channels), x.dtype,
                             hk.initializers.TruncatedNormal(1.0 / np.sqrt(fan_in)))
        b = hk.get_parameter("b", (self.output_channels,), x.dtype, jnp.zeros)
        return _patches(x, k, s, self.padding) @ w.reshape(fan_in, self.output_channels) + b


def _patches(x, k: int, s: int, padding: str = "SAME"):
    """[B, H, W, C] -> [B, H', W', k * k * C]: each output position's k x k window (zero
    padded as XLA's "SAME" pads; none for "VALID"), ordered (row, column, channel) as a
    [k, k, C, O] kernel."""
    rows, cols = x.shape[1], x.shape[2]
    if padding == "VALID":
        out_rows, out_cols = (rows - k) // s + 1, (cols - k) // s + 1
    else:
        out_rows, out_cols = -(-rows // s), -(-cols // s)
        pad_rows = max((out_rows - 1) * s + k - rows, 0)
        pad_cols = max((out_cols - 1) * s + k - cols, 0)
        x = jnp.pad(x, ((0, 0), (pad_rows // 2, pad_rows - pad_rows // 2),
                        (pad_cols // 2, pad_cols - pad_cols // 2), (0, 0)))
    return jnp.concatenate([
        x[:, i:i + (out_rows - 1) * s + 1:s, j:j + (out_cols - 1) * s + 1:s, :]
        for i in range(k) for j in range(k)], axis=-1)


class CNN(HaikuNetwork):
    """Convolutions with ReLU, flattened into dense ReLU layers; integer images are scaled by
    1/255, bool ones taken as 0 and 1. The convolutions are `PatchConv2D`: `haiku.Conv2D`'s
    function and parameters, computed as products of matrices (faster on CPU).

    The MinAtar network of Young and Tian (2019) is `CNN(channels=(16,), kernel=3, stride=1,
    hidden=(128,), input_shape=(10, 10, C))`; the Atari network of Mnih et al. (2015), the
    "Nature CNN" of DQN, Dopamine and CleanRL, is `CNN.nature()`.

    Args:
        channels: The output channels of each convolution (at least one).
        kernel: The kernel size of every convolution, or one per convolution.
        stride: The stride of every convolution, or one per convolution.
        hidden: The widths of the dense layers after the convolutions (at least one; the last
            is the features' width).
        outputs: the width of a last linear layer without activation after the dense ones
            (a Q-network's action values, say), or None: the features of `hidden[-1]`.
        input_shape: the shape of one image when the observations come flat, [..., prod]:
            they are reshaped to it first (`(H, W, C)`, or `(C, H, W)` with
            `channels_first`). None: the observations are images already.
        padding: "SAME" (zero padding, XLA's) or "VALID" (none: the Nature CNN's).
        channels_first: the images are [..., C, H, W] (Atari's stacked frames, as EnvPool and
            ale-py give them), transposed to channels last inside; else [..., H, W, C].
        stacked: the images come stacked, [..., k, H, W, C] (or [..., k, C, H, W]: a
            `FrameStack`'s stacks of images), and the stack is folded into the channels, k
            x C of them, the oldest image's first (as Atari's stacked frames are channels).
        name: The scope name.

    Raises:
        ValueError: `channels` or `hidden` is empty or holds a width that is not a positive
            int, `kernel` or `stride` is not a positive int or one per convolution, `outputs`
            is not a positive int, `input_shape` is not three positive ints, `padding` is
            neither "SAME" nor "VALID".
    """
    def __init__(self, channels: Sequence[int] = (16, 32),
                 kernel: int | Sequence[int] = 3, stride: int | Sequence[int] = 2,
                 hidden: Sequence[int] = (64,),
                 input_shape: tuple[int, int, int] | None = None, outputs: int | None = None,
                 name: str | None = None, padding: str = "SAME",
                 channels_first: bool = False, stacked: bool = False):
        super().__init__(name)
        for label, widths in (("channels", channels), ("hidden", hidden)):
            if not widths or any(not _positive_int(w) for w in widths):
                raise ValueError(f"CNN: {label} must be positive ints, got {widths!r}")
        self.channels = tuple(channels)
        self.kernels = _per_layer("kernel", kernel, len(self.channels))
        self.strides = _per_layer("stride", stride, len(self.channels))
        if outputs is not None and not _positive_int(outputs):
            raise ValueError(f"CNN: outputs must be a positive int or None, got {outputs!r}")
        if input_shape is not None and (len(input_shape) != 3
                                        or any(not _positive_int(s) for s in input_shape)):
            raise ValueError(f"CNN: input_shape must be (H, W, C) or (C, H, W), three "
                             f"positive ints, or None; got {input_shape!r}")
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"CNN: padding must be 'SAME' or 'VALID', got {padding!r}")
        self.kernel, self.stride = kernel, stride
        self.hidden, self.outputs = tuple(hidden), outputs
        self.input_shape = None if input_shape is None else tuple(input_shape)
        self.padding, self.channels_first = padding, bool(channels_first)
        self.stacked = bool(stacked)

    @classmethod
    def nature(cls, input_shape: tuple[int, int, int] | None = (4, 84, 84),
               outputs: int | None = None, name: str | None = None) -> CNN:
        """The Atari network of Mnih et al. (2015): 32 8x8 filters of stride 4, 64 4x4 of
        stride 2, 64 3x3 of stride 1 ("VALID"), a dense layer of 512, ReLU; over stacked
        frames [..., 4, 84, 84] channels first (flat with `input_shape`, as the
        `Environment` component gives them)."""
        return cls(channels=(32, 64, 64), kernel=(8, 4, 3), stride=(4, 2, 1), hidden=(512,),
                   input_shape=input_shape, outputs=outputs, name=name, padding="VALID",
                   channels_first=True)

    def network(self, x):
        """Images [..., H, W, C] ([..., C, H, W] with `channels_first`; flat [..., prod] with
        `input_shape`) to features [..., hidden[-1]] (or [..., outputs]); any leading axes
        are kept."""
        x = self._images(x)
        if self.stacked:
            x = self._folded(x)
        if jnp.issubdtype(x.dtype, jnp.integer):
            x = x.astype(jnp.float32) / 255.0
        elif x.dtype == jnp.bool_:  # planes of 0 and 1
            x = x.astype(jnp.float32)
        lead = x.shape[:-3]
        h = x.reshape((-1,) + x.shape[-3:])
        if self.channels_first:
            h = jnp.transpose(h, (0, 2, 3, 1))
        h = self.convolutions(h)
        h = h.reshape(h.shape[0], -1)
        for width in self.hidden:
            h = jax.nn.relu(hk.Linear(width)(h))
        if self.outputs is not None:
            h = hk.Linear(self.outputs)(h)
        return h.reshape(lead + h.shape[-1:])

    def convolutions(self, h):
        """Images [B, H, W, C] (scaled, channels last) to feature maps [B, H', W', C']: each
        convolution with its ReLU."""
        for c, k, s in zip(self.channels, self.kernels, self.strides, strict=True):
            h = jax.nn.relu(PatchConv2D(c, k, stride=s, padding=self.padding)(h))
        return h

    def _folded(self, x):
        """Stacks of images [..., k, H, W, C] (or [..., k, C, H, W]) as images of k x C
        channels, the oldest image's first."""
        if x.ndim < 4:
            raise ValueError(f"CNN: expected stacks of images [..., k, *image] (stacked=True), "
                             f"got shape {x.shape}")
        if self.channels_first:  # [..., k, C, H, W]: the stack is the channels' outer axis
            return x.reshape(x.shape[:-4] + (-1,) + x.shape[-2:])
        x = jnp.moveaxis(x, -4, -2)  # [..., H, W, k, C]
        return x.reshape(x.shape[:-2] + (-1,))

    def _images(self, x):
        """`x` as images [..., H, W, C] (or [..., C, H, W])."""
        layout = "C, H, W" if self.channels_first else "H, W, C"
        if self.input_shape is None:
            if x.ndim < 3:
                raise ValueError(f"CNN: expected images [..., {layout}], got shape {x.shape}; "
                                 f"flat observations need input_shape=({layout})")
            return x
        if x.ndim < 1 or x.shape[-1] != int(np.prod(self.input_shape)):
            raise ValueError(f"CNN: expected flat observations [..., "
                             f"{int(np.prod(self.input_shape))}] (input_shape "
                             f"{self.input_shape}), got shape {x.shape}")
        return x.reshape(x.shape[:-1] + self.input_shape)


def _per_layer(label: str, value, layers: int) -> tuple[int, ...]:
    """A convolution setting as one value per layer (an int for all, or one per layer)."""
    values = (value,) * layers if not isinstance(value, Sequence) else tuple(value)
    if len(values) != layers or any(not _positive_int(v) for v in values):
        raise ValueError(f"CNN: {label} must be a positive int, or one per convolution "
                         f"({layers}), got {value!r}")
    return values


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
