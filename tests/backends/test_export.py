"""Serialized executables load and run in a fresh process without the component classes."""

import io
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import metagraph as mg
from backends import xla


def test_exported_executable_runs_in_a_subprocess(model_xla, fresh, tmp_path):
    exe = fresh(model_xla)
    x = np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)
    key = np.asarray(jax.random.PRNGKey(4))
    path = tmp_path / "sample.mgx"
    exe.export("sample", path)
    expected = np.asarray(exe.sample(x, key))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "key.npy", key)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        from backends import xla
        assert "toy_components" not in sys.modules
        api = xla.load({str(path)!r})
        out = api(np.load({str(tmp_path / 'x.npy')!r}), np.load({str(tmp_path / 'key.npy')!r}))
        np.save({str(tmp_path / 'out.npy')!r}, np.asarray(out))
    """)
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, timeout=120)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)


def test_exported_state_is_threaded_and_batch_is_polymorphic(model_xla, fresh):
    exe = fresh(model_xla)
    api = xla.load(exe.export("predict"))
    for n in (2, 5):
        x = np.ones((n, 4), np.float32) * n
        np.testing.assert_allclose(api(x), exe.predict(x), rtol=1e-5, atol=1e-6)
    assert int(api.state["model/norm"]["count"]) == 7  # the running mean saw 2 + 5 rows
    assert "model/calls" not in api.state  # a counter the outputs never read is left out


@pytest.mark.parametrize("damage", [lambda b: b[:200], lambda b: b"\x00" * 64,
                                    lambda b: b[:-50]])
def test_corrupt_file_gives_load_error(model_xla, damage):
    blob = model_xla.export("predict")
    with pytest.raises(mg.LoadError, match="backends.xla.load"):
        xla.load(damage(blob))


def retampered(data: bytes, name: str) -> bytes:
    """`data` with array `name` changed (its last byte flipped) and the zip rewritten, so its
    checksums are right again: what a deliberate change to an exported file looks like."""
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        arrays = {key: archive[key].copy() for key in archive.files}
    flat = arrays[name].reshape(-1).view(np.uint8)
    flat[-1] ^= 0xFF
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["state_0", "exported"])
def test_a_changed_file_with_good_zip_checksums_is_a_load_error(model_xla, fresh, name):
    data = fresh(model_xla).export("predict")
    assert np.asarray(xla.load(data)(np.ones((2, 4), np.float32))).shape[0] == 2
    with pytest.raises(mg.LoadError, match="does not match the SHA-256 digest"):
        xla.load(retampered(data, name))


def test_a_loaded_api_refuses_another_dtype_like_the_executor(model_xla, fresh):
    api = xla.load(fresh(model_xla).export("predict"))
    x = np.ones((2, 4), np.float32)
    expected = np.asarray(api(x))
    with pytest.raises(mg.SpaceError, match=r"input 'x' must be float32, got float64"):
        api(x.astype(np.float64))
    np.testing.assert_array_equal(np.asarray(api(x)), expected)


def test_a_loaded_api_refuses_inputs_that_are_not_finite(model_xla, fresh):
    api = xla.load(fresh(model_xla).export("predict"))
    x = np.ones((2, 4), np.float32)
    expected = np.asarray(api(x))
    for bad in (np.nan, np.inf, -np.inf):
        given = x.copy()
        given[1, 2] = bad
        with pytest.raises(mg.SpaceError, match=r"input 'x' is not finite at index \(1, 2\)"):
            api(given)
    np.testing.assert_array_equal(np.asarray(api(x)), expected)
