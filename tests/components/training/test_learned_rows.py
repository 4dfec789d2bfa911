"""`learned_rows`: one `learn` call per sampled batch, each given the same extra inputs (a
key), and a metrics row each with the batch's steps, its episodes' mean return and mean length
(where the batch counts lengths) and the loss."""

from types import SimpleNamespace

import numpy as np
import pytest

from components.training.algorithms.rows import learned_rows


class Learner:
    """An executor's face as `learned_rows` uses it: a graph whose `learn` takes `reward` and
    `key`, and a `learn` that records what it was given."""

    def __init__(self):
        self.graph = SimpleNamespace(apis={"learn": SimpleNamespace(inputs=["reward", "key"])},
                                     root=SimpleNamespace(name="learner"))
        self.calls = []

    def learn(self, reward, key):
        self.calls.append(key)
        return {"loss": float(np.sum(reward))}


def batch(steps, episodes, returns, lengths=None):
    out = {"reward": np.ones(steps), "episodes": episodes, "episode_return_sum": returns}
    if lengths is not None:
        out["episode_length_sum"] = lengths
    return out


def test_every_batch_gets_the_extra_inputs_and_a_row_of_its_own():
    learner = Learner()
    rows = learned_rows(learner, [batch(8, 2, 30.0, 12), batch(4, 0, 0.0, 0),
                                  batch(6, 3, 9.0)], key="k")
    assert learner.calls == ["k", "k", "k"]  # each batch learns with the key
    assert [row.steps for row in rows] == [8, 4, 6]
    assert [row.episode_return_mean for row in rows] == [15.0, None, 3.0]
    assert rows[0].extra == {"episodes": 2, "loss": 8.0, "episode_length_mean": 6.0}
    assert rows[1].extra["episode_length_mean"] is None  # no episode ended
    assert "episode_length_mean" not in rows[2].extra  # a batch that counts no lengths


def test_a_batch_without_the_extra_inputs_names_them():
    with pytest.raises(KeyError, match=r"the batch lacks \['key'\]"):
        learned_rows(Learner(), [batch(2, 0, 0.0)])
