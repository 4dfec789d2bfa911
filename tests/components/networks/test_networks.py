"""Haiku networks as components compute what haiku computes with the same parameters; the
LSTM carries its recurrent state between calls and clears it per row."""

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from components.networks import CNN, LSTM, MLP
from components.networks.cnn import PatchConv2D
from metagraph.spaces import Bool, Box
from metagraph.testing import BACKENDS, ComponentTest

rng = np.random.default_rng(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_is_haikus_mlp(backend):
    test = ComponentTest(MLP([16, 3]), {"x": Box((5,), batch=True)}, backend=backend)
    x = rng.normal(size=(4, 5)).astype(np.float32)
    params = test.get_state()["params"]
    ref = hk.without_apply_rng(hk.transform(
        lambda x: hk.nets.MLP([16, 3], activation=jax.nn.tanh)(x))).apply(params, x)
    test.test(("forward", x), expected_outputs=np.asarray(ref), decimals=5)


def haikus_cnn(channels, kernel, stride, hidden, outputs=None):
    """The same CNN written with haiku's own `Conv2D`: the reference."""
    def network(x):
        for c in channels:
            x = jax.nn.relu(hk.Conv2D(c, kernel, stride=stride)(x))
        x = x.reshape(x.shape[0], -1)
        for width in hidden:
            x = jax.nn.relu(hk.Linear(width)(x))
        return x if outputs is None else hk.Linear(outputs)(x)
    return hk.without_apply_rng(hk.transform(network))


@pytest.mark.parametrize("backend", BACKENDS)
def test_cnn_scales_uint8_images_and_is_haikus_convolution(backend):
    test = ComponentTest(CNN(channels=(4, 3), hidden=(8,)),
                         {"x": Box((8, 7, 3), batch=True, dtype=np.uint8)}, backend=backend)
    images = rng.integers(0, 256, (2, 8, 7, 3)).astype(np.uint8)
    out = test.test(("forward", images))
    assert out.shape == (2, 8)
    params = test.get_state()["params"]
    ref = haikus_cnn((4, 3), 3, 2, (8,)).apply(params, images.astype(np.float32) / 255.0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("kernel", "stride"), [(3, 1), (2, 2), (4, 3), (1, 1)])
def test_patch_convolution_is_haikus_conv2d(kernel, stride):
    """`PatchConv2D` (the CNN's convolution as a product of matrices) against haiku.Conv2D
    with the same parameters: odd and even kernels, strides that do and do not divide."""
    x = rng.normal(size=(3, 10, 9, 4)).astype(np.float32)
    mine = hk.without_apply_rng(hk.transform(lambda x: PatchConv2D(5, kernel, stride)(x)))
    ref = hk.without_apply_rng(hk.transform(lambda x: hk.Conv2D(5, kernel, stride=stride)(x)))
    params = mine.init(jax.random.PRNGKey(1), x)
    assert jax.tree.map(np.shape, params) == jax.tree.map(np.shape, ref.init(
        jax.random.PRNGKey(1), x))
    np.testing.assert_allclose(mine.apply(params, x), ref.apply(params, x), rtol=1e-5,
                               atol=1e-5)


def test_cnn_reshapes_flat_planes_and_keeps_leading_axes():
    """MinAtar's flat planes [T, B, 10 * 10 * 4] with input_shape: the images' CNN."""
    cnn = CNN(channels=(16,), kernel=3, stride=1, hidden=(32,), input_shape=(10, 10, 4))
    test = ComponentTest(cnn, {"x": Box((400,), batch=True)})
    flat = rng.integers(0, 2, (6, 400)).astype(np.float32)
    out = test.test(("forward", flat))
    params = test.get_state()["params"]
    ref = haikus_cnn((16,), 3, 1, (32,)).apply(params, flat.reshape(6, 10, 10, 4))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    time_major = cnn.forward_with(params, flat.reshape(2, 3, 400))
    np.testing.assert_allclose(time_major, out.reshape(2, 3, 32), rtol=1e-5, atol=1e-6)


def test_cnn_outputs_a_linear_layer_of_action_values():
    """`outputs=`: a last linear layer without ReLU (DQN's Q-values over MinAtar's planes),
    haiku's network with one more `Linear`."""
    cnn = CNN(channels=(4,), kernel=3, stride=1, hidden=(8,), outputs=3,
              input_shape=(10, 10, 4))
    test = ComponentTest(cnn, {"x": Box((400,), batch=True)})
    flat = rng.integers(0, 2, (5, 400)).astype(np.float32)
    out = test.test(("forward", flat))
    ref = haikus_cnn((4,), 3, 1, (8,), outputs=3).apply(test.get_state()["params"],
                                                        flat.reshape(5, 10, 10, 4))
    assert out.shape == (5, 3)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_the_nature_cnn_is_haikus_valid_convolutions_over_channels_first_frames():
    """`CNN.nature()` over Atari's stacked frames [B, 4, 84, 84] (flat, as the Environment
    gives them) against the same network written with haiku's `Conv2D` reading NCHW itself;
    its size is CleanRL's Atari torso (1,684,128 parameters)."""
    cnn = CNN.nature(outputs=6)
    test = ComponentTest(cnn, {"x": Box((4 * 84 * 84,), batch=True, dtype=np.uint8)})
    frames = rng.integers(0, 256, (3, 4, 84, 84)).astype(np.uint8)
    out = test.test(("forward", frames.reshape(3, -1)))
    params = test.get_state()["params"]

    def reference(x):
        for c, k, s in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = jax.nn.relu(hk.Conv2D(c, k, stride=s, padding="VALID",
                                      data_format="NCHW")(x))
        x = jnp.transpose(x, (0, 2, 3, 1)).reshape(x.shape[0], -1)  # (H, W, C) as flattened
        features = jax.nn.relu(hk.Linear(512)(x))
        return hk.Linear(6)(features)

    ref = hk.without_apply_rng(hk.transform(reference))
    ref_params = ref.init(jax.random.PRNGKey(0), frames / np.float32(255.0))
    # the same layers in the same order; haiku's NCHW biases are [C, 1, 1]
    mapped = {layer: {n: params[layer][n].reshape(ref_params[layer][n].shape)
                      for n in ref_params[layer]} for layer in ref_params}
    np.testing.assert_allclose(out, ref.apply(mapped, frames / np.float32(255.0)), rtol=2e-4,
                               atol=2e-4)
    torso = sum(np.size(v) for name, layer in params.items() if not name.endswith("linear_1")
                for v in layer.values())
    assert torso == 1_684_128
    with pytest.raises(ValueError, match="one per convolution"):
        CNN(channels=(4, 4), kernel=(3,))
    with pytest.raises(ValueError, match="padding must be"):
        CNN(padding="FULL")


def test_the_impala_cnn_is_the_residual_network_written_with_haiku():
    """`ImpalaCNN` over channels-first frames against IMPALA's network written with haiku's
    own `Conv2D` and `max_pool` (Espeholt et al. 2018; CleanRL's and Cleanba's torso)."""
    from components.networks import ImpalaCNN

    cnn = ImpalaCNN(channels=(4, 8), hidden=(16,), input_shape=(2, 12, 10),
                    channels_first=True, outputs=3)
    test = ComponentTest(cnn, {"x": Box((2 * 12 * 10,), batch=True, dtype=np.uint8)})
    frames = rng.integers(0, 256, (3, 2, 12, 10)).astype(np.uint8)
    out = test.test(("forward", frames.reshape(3, -1)))
    params = test.get_state()["params"]

    def reference(x):
        x = jnp.transpose(x, (0, 2, 3, 1))
        for c in (4, 8):
            x = hk.Conv2D(c, 3)(x)
            x = hk.max_pool(x, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
            for _ in range(2):
                y = hk.Conv2D(c, 3)(jax.nn.relu(x))
                x = x + hk.Conv2D(c, 3)(jax.nn.relu(y))
        x = jax.nn.relu(x).reshape(x.shape[0], -1)
        features = jax.nn.relu(hk.Linear(16)(x))
        return hk.Linear(3)(features)

    ref = hk.without_apply_rng(hk.transform(reference))
    scaled = frames / np.float32(255.0)
    assert jax.tree.map(np.shape, ref.init(jax.random.PRNGKey(0), scaled)) == \
        jax.tree.map(np.shape, params)
    assert out.shape == (3, 3)
    np.testing.assert_allclose(out, ref.apply(params, scaled), rtol=1e-4, atol=1e-5)


def test_cnn_bad_settings_and_inputs_are_clear_errors():
    for kwargs, match in [({"channels": ()}, "channels must be positive ints"),
                          ({"hidden": (0,)}, "hidden must be positive ints"),
                          ({"kernel": 1.5}, "kernel must be a positive int"),
                          ({"stride": True}, "stride must be a positive int"),
                          ({"outputs": 0}, "outputs must be a positive int or None"),
                          ({"input_shape": (10, 10)}, "input_shape must be")]:
        with pytest.raises(ValueError, match=match):
            CNN(**kwargs)
    flat = hk.without_apply_rng(hk.transform(CNN(input_shape=(2, 2, 1)).network))
    with pytest.raises(ValueError, match=r"expected flat observations \[..., 4\]"):
        flat.init(jax.random.PRNGKey(0), np.zeros((1, 5), np.float32))
    images = hk.without_apply_rng(hk.transform(CNN().network))
    with pytest.raises(ValueError, match="flat observations need input_shape"):
        images.init(jax.random.PRNGKey(0), np.zeros((1, 5), np.float32))


@pytest.mark.parametrize("channels_first", [False, True])
def test_stacked_images_are_folded_into_the_channels_oldest_first(channels_first):
    """`stacked=True`: stacks [B, k, *image] give what the same CNN gives of the images with
    the stack's k images side by side in the channels (NumPy's concatenate on the channel
    axis, the oldest first), with the same parameters."""
    image = (3, 6, 5) if channels_first else (6, 5, 3)  # C = 3 either way
    stacks = rng.normal(size=(2, 4, *image)).astype(np.float32)
    axis = -3 if channels_first else -1
    side_by_side = np.concatenate([stacks[:, i] for i in range(4)], axis=axis)
    folded = hk.without_apply_rng(hk.transform(CNN(channels=(4,), hidden=(8,), stacked=True,
                                                   channels_first=channels_first).network))
    plain = hk.without_apply_rng(hk.transform(CNN(channels=(4,), hidden=(8,),
                                                  channels_first=channels_first).network))
    params = plain.init(jax.random.PRNGKey(0), side_by_side)
    np.testing.assert_allclose(folded.apply(params, stacks), plain.apply(params, side_by_side),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"expected stacks of images \[..., k, \*image\]"):
        folded.apply(params, side_by_side[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_carries_and_resets_its_state(backend):
    test = ComponentTest(LSTM(6, batch_size=3), {"x": Box((3, 2)), "mask": Bool((3,))},
                         backend=backend)
    xs = rng.normal(size=(4, 3, 2)).astype(np.float32)
    params = test.get_state()["params"]
    core = hk.without_apply_rng(hk.transform(lambda x, s: hk.LSTM(6)(x, s)))
    state = hk.LSTMState(np.zeros((3, 6), np.float32), np.zeros((3, 6), np.float32))
    for x in xs:
        expected, state = core.apply(params, x, state)
        test.test(("step", x), expected_outputs=np.asarray(expected), decimals=5)
    test.test(("reset", np.array([True, False, False])))
    hidden, cell = test.get_state()["recurrent"]
    assert (hidden[0] == 0).all() and (cell[0] == 0).all()
    np.testing.assert_allclose(hidden[1:], state.hidden[1:], rtol=1e-5)
