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
