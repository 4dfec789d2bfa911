"""The compiled module: built against jaxlib's XLA FFI headers, its handler callable from XLA."""

import jax
import jax.numpy as jnp
import numpy as np

from metagraph import _native


def affine(x, scale, shift):
    return jax.ffi.ffi_call("metagraph_affine", jax.ShapeDtypeStruct(x.shape, x.dtype),
                            vmap_method="broadcast_all")(x, scale=np.float32(scale),
                                                         shift=np.float32(shift))


def test_build_info():
    info = _native.build_info()
    assert info["cplusplus"] >= 201703
    assert info["ffi_api_major"] == 0


def test_ffi_handler_runs_inside_jit_and_vmap():
    jax.ffi.register_ffi_target("metagraph_affine", _native.ffi_handlers()["metagraph_affine"],
                                platform="cpu")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(jax.jit(lambda v: affine(v, 2.0, 1.0))(x), 2 * x + 1)
    np.testing.assert_allclose(jax.vmap(lambda v: affine(v, -1.0, 0.5))(jnp.asarray(x)),
                               0.5 - x)
