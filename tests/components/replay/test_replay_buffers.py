"""Replay buffers against brute-force counts and the formulas of Schaul et al. (2016):
wrap-around, uniform and prioritised sampling frequencies (chi-square), importance weights,
the running maximum priority, every record of a batch update (RLgraph's two bugs), bad
priorities, and a checkpoint round trip."""

import jax
import numpy as np
import pytest
from scipy import stats

import metagraph as mg
from components.replay import PrioritizedReplay, ReplayBuffer, sum_tree
from metagraph.spaces import Box, Dict, Discrete, PRNGKey
from metagraph.testing import BACKENDS, ComponentTest

RECORD = Dict(obs=Box((2,)), action=Discrete(3))
SPACES = {"records": RECORD.with_ranks(batch=True), "key": PRNGKey(),
          "indices": Box((), dtype=np.int32, batch=True), "priorities": Box((), batch=True),
          "beta": Box(())}
ALPHA = 0.7


def records(start, n):
    ids = np.arange(start, start + n)
    return {"obs": np.stack([ids, -ids], 1).astype(np.float32),
            "action": (ids % 3).astype(np.int32)}


def keys(n, seed=0):
    return [np.asarray(k) for k in jax.random.split(jax.random.PRNGKey(seed), n)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_uniform_ring_buffer_wraps_and_samples_uniformly(backend):
    test = ComponentTest(ReplayBuffer(10, RECORD), SPACES, backend=backend)
    for start in (0, 4, 8):
        size = test.test(("insert", records(start, 4)))
    assert size == 10
    obs = test.get_state()["storage"]["obs"][:, 0]
    np.testing.assert_array_equal(obs, [10, 11, 2, 3, 4, 5, 6, 7, 8, 9])  # 0, 1 overwritten
    counts = np.zeros(12)
    for key in keys(60 if backend == "xla" else 10):
        batch, indices = test.test(("sample", key))
        np.testing.assert_array_equal(batch["obs"][:, 0], obs[indices])
        counts += np.bincount(batch["obs"][:, 0].astype(int), minlength=12)
    assert counts[:2].sum() == 0
    if backend == "xla":
        assert stats.chisquare(counts[2:]).pvalue > 1e-3


@pytest.fixture(scope="module", params=BACKENDS)
def per(request):
    test = ComponentTest(PrioritizedReplay(8, RECORD, alpha=ALPHA), SPACES,
                         backend=request.param)
    test.test(("insert", records(0, 8)))
    return test


def leaves(test):
    trees = test.get_state()["trees"]
    return trees[0, trees.shape[1] // 2:][:8]


def test_batch_update_sets_every_record_and_keeps_the_running_maximum(per):
    priorities = np.array([0.5, 1.0, 2.0, 4.0, 0.25, 1.5, 3.0, 6.0], np.float32)
    max_priority = per.test(("update_priorities", [np.arange(8, dtype=np.int32), priorities]))
    np.testing.assert_allclose(leaves(per), priorities**ALPHA, rtol=1e-6)  # the last one too
    trees = per.get_state()["trees"]
    assert trees[0, 1] == pytest.approx((priorities**ALPHA).sum(), rel=1e-6)
    assert trees[1, 1] == pytest.approx(0.25**ALPHA, rel=1e-6)
    assert max_priority == pytest.approx(6.0)
    # a later batch with smaller priorities does not lower the running maximum
    assert per.test(("update_priorities", [np.array([7], np.int32),
                                           np.array([6.0], np.float32)])) == pytest.approx(6.0)
    assert per.test(("update_priorities", [np.array([2], np.int32),
                                           np.array([2.0], np.float32)])) == pytest.approx(6.0)
    # duplicate indices in one batch: the last value wins
    per.test(("update_priorities", [np.array([3, 3], np.int32), np.array([9.0, 4.0],
                                                                           np.float32)]))
    assert leaves(per)[3] == pytest.approx(4.0**ALPHA, rel=1e-6)
    assert per.test(("update_priorities", [np.array([3], np.int32),
                                           np.array([4.0], np.float32)])) == pytest.approx(9.0)


def test_sampling_frequencies_and_importance_weights_follow_the_formulas(per):
    priorities = np.array([0.5, 1.0, 2.0, 4.0, 0.25, 1.5, 3.0, 6.0], np.float32)
    per.test(("update_priorities", [np.arange(8, dtype=np.int32), priorities]))
    p = priorities.astype(np.float64) ** ALPHA
    p /= p.sum()
    counts = np.zeros(8)
    beta = np.float32(0.5)
    # op by op (eager) a draw costs about 0.3 s on 2 cores: enough draws there for the
    # weights, the frequencies' statistics on the compiled program (the same function)
    for key in keys(150 if per.backend == "xla" else 15):
        batch, indices, weights = per.test(("sample", [key, beta]))
        np.testing.assert_array_equal(batch["obs"][:, 0], indices)
        expected = (8 * p[indices]) ** -beta / ((8 * p) ** -beta).max()
        np.testing.assert_allclose(weights, expected, rtol=1e-4)
        counts += np.bincount(indices, minlength=8)
    if per.backend == "xla":
        assert stats.chisquare(counts, p * counts.sum()).pvalue > 1e-3


def test_new_records_enter_at_the_running_maximum():
    test = ComponentTest(PrioritizedReplay(4, RECORD, alpha=1.0), SPACES)
    test.test(("insert", records(0, 2)))
    test.test(("update_priorities", [np.array([0, 1], np.int32), np.array([5.0, 0.5],
                                                                           np.float32)]))
    test.test(("update_priorities", [np.array([0], np.int32), np.array([1.0], np.float32)]))
    test.test(("insert", records(2, 1)))
    np.testing.assert_allclose(leaves(test)[:3], [1.0, 0.5, 5.0])


@pytest.mark.parametrize("bad", [0.0, np.nan, -1.0, np.inf])
def test_bad_priorities_are_refused_and_change_nothing(per, bad):
    before = per.get_state()
    with pytest.raises(mg.RuntimeCheckError, match=r"prioritized_replay.update_priorities: "
                                                   r"priorities must be finite and > 0"):
        per.test(("update_priorities", [np.array([1, 2], np.int32),
                                        np.array([1.0, bad], np.float32)]))
    jax.tree.map(np.testing.assert_array_equal, per.get_state(), before)


def test_state_round_trips_through_a_checkpoint(per, tmp_path):
    path = per.executor.save_checkpoint(tmp_path / "replay.npz", meta={"step": 3})
    fresh = ComponentTest(PrioritizedReplay(8, RECORD, alpha=ALPHA), SPACES,
                          backend=per.backend)
    assert fresh.executor.load_checkpoint(path) == {"step": 3}
    key, beta = keys(1, seed=9)[0], np.float32(0.4)
    for a, b in zip(per.test(("sample", [key, beta])), fresh.test(("sample", [key, beta])),
                    strict=True):
        jax.tree.map(np.testing.assert_array_equal, a, b)


def test_sum_tree_prefix_search_is_a_brute_force_cumsum():
    rng = np.random.default_rng(0)
    values = rng.random(13).astype(np.float32)
    trees = sum_tree.update(sum_tree.empty(13), np.arange(13), values)
    targets = rng.random(500).astype(np.float32) * values.sum()
    expected = np.searchsorted(np.cumsum(values), targets, side="right")
    np.testing.assert_array_equal(sum_tree.find_prefix_sum(trees, targets), expected)


@pytest.mark.parametrize("start,n", [(0, 5), (9, 4), (11, 5), (3, 13)])
def test_ring_writes_wrap_and_keep_both_trees_exact(start, n):
    capacity = 13
    rng = np.random.default_rng(start)
    old = rng.random(capacity).astype(np.float32) + 0.1
    trees = sum_tree.update(sum_tree.empty(capacity), np.arange(capacity), old)
    new = rng.random(n).astype(np.float32) + 0.1
    trees = np.asarray(sum_tree.write_ring(trees, np.int32(start), new, capacity))
    expected = old.copy()
    expected[(start + np.arange(n)) % capacity] = new
    leaves = trees.shape[1] // 2
    np.testing.assert_allclose(trees[0, leaves:leaves + capacity], expected)
    assert (trees[0, leaves + capacity:] == 0).all()
    assert np.isinf(trees[1, leaves + capacity:]).all()
    assert trees[0, 1] == pytest.approx(expected.sum(), rel=1e-6)
    assert trees[1, 1] == pytest.approx(expected.min())
    for node in range(1, leaves):  # every inner node is the sum / min of its children
        assert trees[0, node] == pytest.approx(trees[0, 2 * node] + trees[0, 2 * node + 1],
                                               rel=1e-5, abs=1e-6)
        assert trees[1, node] == min(trees[1, 2 * node], trees[1, 2 * node + 1])


@pytest.mark.parametrize("buffer", [ReplayBuffer, PrioritizedReplay])
def test_an_empty_buffer_refuses_to_sample_and_says_so(buffer):
    test = ComponentTest(buffer(4, RECORD, min_size=2), SPACES)
    sample = ("sample", keys(1) + ([np.float32(0.4)] if buffer is PrioritizedReplay else []))
    assert not test.test(("can_sample", None))
    with pytest.raises(mg.RuntimeCheckError, match=r"\.sample: the buffer holds fewer than "
                                                   r"min_size=2 records"):
        test.test(sample)  # was index 0 (with NaN weights)
    test.test(("insert", records(0, 1)))
    assert not test.test(("can_sample", None))
    with pytest.raises(mg.RuntimeCheckError, match="fewer than min_size=2"):
        test.test(sample)
    test.test(("insert", records(1, 1)))
    assert test.test(("can_sample", None))
    assert set(np.asarray(test.test(sample)[1]).tolist()) <= {0, 1}
    with pytest.raises(ValueError, match="min_size 5 exceeds the capacity 4"):
        buffer(4, RECORD, min_size=5)


class Stratified(mg.Component):
    """A root over a uniform buffer whose `sample` draws stratified (one record from each of
    `batch_size` equal slices)."""

    def __init__(self, capacity, batch_size):
        super().__init__()
        self.replay = ReplayBuffer(capacity, RECORD)
        self.batch_size = batch_size

    @mg.api
    def insert(self, records):
        return self.replay.insert(records)

    @mg.api
    def sample(self, key):
        return self.replay.sample(key, self.batch_size, stratified=True)[1]


def test_stratified_draws_take_one_record_from_each_slice_and_every_record_alike():
    test = ComponentTest(Stratified(12, 4), {"records": RECORD.with_ranks(batch=True),
                                             "key": PRNGKey()})
    test.test(("insert", records(0, 12)))
    counts = np.zeros(12)
    for key in keys(300):
        indices = np.asarray(test.test(("sample", key)))
        np.testing.assert_array_equal(indices // 3, [0, 1, 2, 3])  # one a slice of 3
        counts += np.bincount(indices, minlength=12)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_the_empty_check_holds_under_vmap():
    """Several seeds run vmapped (`--seeds`), where a cond runs both branches: a buffer that
    holds records samples without a refusal, an empty one is still refused."""
    from backends import xla

    graph = mg.build(ReplayBuffer(4, RECORD), SPACES, apis=["insert", "sample", "can_sample"])
    exe = xla.lower(graph, seeds=2)
    with pytest.raises(mg.RuntimeCheckError, match="fewer than min_size=1"):
        exe.sample(np.stack(keys(2)))
    batch = {name: np.stack([value, value]) for name, value in records(0, 2).items()}
    exe.insert(batch)
    exe.sample(np.stack(keys(2)))  # no refusal
