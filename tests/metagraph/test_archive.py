"""Checkpoints and exported executables share one archive reader: a crafted header (a list
where an object is expected, missing entries, wrong types) is a LoadError from both loaders,
never a raw AttributeError, TypeError or KeyError."""

import io
import json

import numpy as np
import pytest

import metagraph as mg
from backends import xla
from backends.xla.export import FORMAT as EXPORTED
from backends.xla.export import payload_digest
from metagraph import archive, checkpoint


def crafted(header, arrays=None) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(json.dumps(header).encode(), np.uint8),
             **(arrays or {}))
    return buffer.getvalue()


@pytest.mark.parametrize("header, message", [
    ([1, 2], "header is a list"),
    ({"format": checkpoint.FORMAT}, "header entry 'leaves'"),
    ({"format": checkpoint.FORMAT, "leaves": "x"}, "header entry 'leaves'"),
    ({"format": checkpoint.FORMAT, "leaves": [{"path": "a"}]}, "corrupt checkpoint"),
    ({"format": checkpoint.FORMAT, "leaves": [3]}, "corrupt checkpoint"),
    ({"format": "other"}, "not a checkpoint of format"),
])
def test_crafted_checkpoint_headers_are_load_errors(tmp_path, header, message):
    path = tmp_path / "c.npz"
    path.write_bytes(crafted(header, {"leaf_0": np.zeros(2, np.float32)}))
    with pytest.raises(mg.LoadError, match=message):
        checkpoint.load(path)


@pytest.mark.parametrize("header, message", [
    ([1], "header is a list"),
    ({"format": EXPORTED}, "header entry 'num_state_leaves'"),
    ({"format": EXPORTED, "num_state_leaves": 0, "api": "act", "root": "r",
      "outputs": "o"}, "header entry 'inputs'"),
    ({"format": EXPORTED, "num_state_leaves": 0, "api": "act", "root": "r",
      "outputs": "o", "inputs": {}}, "header entry 'digest'"),
    ({"format": EXPORTED, "num_state_leaves": 1, "api": "act", "root": "r",
      "outputs": "o", "inputs": {},
      "digest": payload_digest({}, {"format": EXPORTED, "num_state_leaves": 1, "api": "act",
                                    "root": "r", "outputs": "o", "inputs": {}})}, "no array"),
])
def test_crafted_export_headers_are_load_errors(header, message):
    with pytest.raises(mg.LoadError, match=message):
        xla.load(crafted(header))


def test_a_checkpoint_round_trips_through_the_shared_archive(tmp_path):
    state = {"a": {"w": np.arange(3, dtype=np.float32)}}
    path = checkpoint.save(tmp_path / "c.npz", state, meta={"step": 2})
    header, arrays = archive.read(path, checkpoint.FORMAT, str(path), "checkpoint")
    assert header["meta"] == {"step": 2} and list(arrays) == ["leaf_0"]
    loaded, meta = checkpoint.load(path, like=state)
    np.testing.assert_array_equal(loaded["a"]["w"], state["a"]["w"])


# ---- received files are data (issue 24 part 9; docs/reliability.md) -------------------------

def test_a_deeply_nested_header_is_a_load_error_not_a_recursion_error(tmp_path):
    deep = b"[" * 200_000 + b"]" * 200_000
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(deep, np.uint8))
    for load in (xla.load, lambda data: checkpoint.load(_written(tmp_path, data))):
        with pytest.raises(mg.LoadError, match="nests too deeply"):
            load(buffer.getvalue())


def _written(tmp_path, data: bytes):
    path = tmp_path / "c.npz"
    path.write_bytes(data)
    return path


def test_a_zip_bomb_member_is_refused_unread(tmp_path):
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("meta.npy", b"")
        with zipped.open("leaf_0.npy", "w", force_zip64=True) as member:  # 256 MiB of zeros
            chunk = b"\0" * (1 << 24)
            for _ in range(16):
                member.write(chunk)
    data = buffer.getvalue()
    assert len(data) < 8 << 20
    for load in (xla.load, lambda data: checkpoint.load(_written(tmp_path, data))):
        with pytest.raises(mg.LoadError, match="would expand to 268,435,456 bytes"):
            load(data)


def test_many_members_each_under_the_bound_are_refused_unread(tmp_path):
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("meta.npy", b"")
        for i in range(400):  # each expands 64x less than the bound, all together 400x more
            zipped.writestr(f"leaf_{i}.npy", b"\0" * (1 << 20))
    data = buffer.getvalue()
    for load in (xla.load, lambda data: checkpoint.load(_written(tmp_path, data))):
        with pytest.raises(mg.LoadError, match="its 401 members would expand to "
                                               "419,430,400 bytes"):
            load(data)


def test_what_is_not_a_regular_file_is_refused_without_reading_or_blocking(tmp_path):
    import os

    fifo = tmp_path / "export.mgx"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    cases = [("/dev/zero", "is a device"), (fifo, "is a FIFO"), (tmp_path, "is a directory")]
    for path, kind in cases:
        with pytest.raises(mg.LoadError, match=f"{kind}, not an exported executable file"):
            xla.load(path)
        with pytest.raises(mg.LoadError, match=f"{kind}, not a checkpoint file"):
            checkpoint.load(path)


@pytest.mark.parametrize("dtype", ["float64", "int8"])
def test_a_rewritten_input_dtype_in_the_header_is_a_load_error(model_xla, fresh, dtype):
    data = fresh(model_xla).export("predict")
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        arrays = {key: stored[key].copy() for key in stored.files}
    header = json.loads(arrays["meta"].tobytes())
    header["inputs"]["x"] = header["inputs"]["x"].replace("float32", dtype)
    assert dtype in header["inputs"]["x"]
    with pytest.raises(mg.LoadError, match="does not match the SHA-256 digest"):
        xla.load(crafted(header, {k: v for k, v in arrays.items() if k != "meta"}))


def test_a_state_array_of_another_dtype_is_a_load_error_even_with_a_new_digest(model_xla, fresh):
    data = fresh(model_xla).export("predict")
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        arrays = {key: stored[key].copy() for key in stored.files if key != "meta"}
        header = json.loads(stored["meta"].tobytes())
    arrays["state_0"] = arrays["state_0"].astype(np.float64)
    header["digest"] = payload_digest(arrays, header)  # a forger's digest: the types still
    with pytest.raises(mg.LoadError, match="state array 0 is float64"):
        xla.load(crafted(header, arrays))
