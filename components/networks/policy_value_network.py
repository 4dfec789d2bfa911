"""`PolicyValueNetwork`: AlphaZero's network (Silver et al. 2018) over a board's planes: a
torso, then a policy head (logits over the actions) and a value head (tanh, the expected
outcome for the player to move)."""

from __future__ import annotations

from collections.abc import Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from components.networks.haiku_network import HaikuNetwork

TORSOS = ("mlp", "residual")


class PolicyValueNetwork(HaikuNetwork):
    """`forward(planes [B, rows, columns, planes]) -> (logits [B, num_actions], value [B])`.

    The torso is an MLP over the flattened planes (`torso="mlp"`: ReLU layers of `hidden`
    widths, cheap enough for search on a CPU), or AlphaZero's residual tower
    (`torso="residual"`: a 3x3 convolution to `channels`, then `blocks` residual blocks of
    two 3x3 convolutions, layer-normalised instead of batch-normalised so the network has no
    batch statistics), flattened into a dense layer of `hidden[-1]` units. The value head is
    tanh of a linear layer: the value of a position in [-1, 1] from its mover's view.

    Args:
        num_actions: the logits' width.
        torso: "mlp" or "residual".
        hidden: the MLP's widths (the dense layer's width after a residual tower: the last).
        channels: the residual tower's channels.
        blocks: its residual blocks.
        name: the scope name.

    Raises:
        ValueError: an unknown torso, or sizes that are not positive ints.
    """

    def __init__(self, num_actions: int, torso: str = "mlp", hidden: Sequence[int] = (128, 128),
                 channels: int = 32, blocks: int = 2, name: str | None = None):
        super().__init__(name)
        if torso not in TORSOS:
            raise ValueError(f"PolicyValueNetwork: torso must be one of {TORSOS}, got {torso!r}")
        sizes = (num_actions, *hidden, channels)
        if not hidden or any(not isinstance(s, int) or isinstance(s, bool) or s < 1
                             for s in sizes) or not isinstance(blocks, int) or blocks < 0:
            raise ValueError(f"PolicyValueNetwork: num_actions, hidden and channels must be "
                             f"positive ints and blocks an int >= 0, got {num_actions!r}, "
                             f"{hidden!r}, {channels!r}, {blocks!r}")
        self.num_actions, self.torso = num_actions, torso
        self.hidden, self.channels, self.blocks = tuple(hidden), channels, blocks

    def _residual(self, x: jax.Array) -> jax.Array:
        def conv(h):
            return hk.Conv2D(self.channels, 3)(h)

        def norm(h):
            return hk.LayerNorm(-1, create_scale=True, create_offset=True)(h)

        h = jax.nn.relu(norm(conv(x)))
        for _ in range(self.blocks):
            inner = jax.nn.relu(norm(conv(h)))
            h = jax.nn.relu(h + norm(conv(inner)))
        h = h.reshape(h.shape[0], -1)
        return jax.nn.relu(hk.Linear(self.hidden[-1])(h))

    def network(self, planes):
        """`planes` [B, rows, columns, planes] -> (logits [B, num_actions], value [B])."""
        if planes.ndim != 4:
            raise ValueError(f"PolicyValueNetwork: expected planes [B, rows, columns, planes], "
                             f"got shape {planes.shape}")
        x = planes.astype(jnp.float32)
        if self.torso == "mlp":
            h = hk.nets.MLP(self.hidden, activate_final=True)(x.reshape(x.shape[0], -1))
        else:
            h = self._residual(x)
        logits = hk.Linear(self.num_actions, name="policy")(h)
        value = jnp.tanh(hk.Linear(1, name="value")(h))[:, 0]
        return logits, value
