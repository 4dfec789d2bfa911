from typing import NamedTuple

import jax
import numpy as np
import pytest

from metagraph.spaces import (
    BATCH,
    TIME,
    Bool,
    Box,
    Dict,
    Discrete,
    PRNGKey,
    Record,
    Tuple,
    space_of,
)


def test_box_ranks_and_abstract():
    space = Box((4,), batch=True, time=True)
    assert str(space) == "float32[B,T,4]"
    assert space.short() == "f32[B,T,4]"
    abstract = space.to_abstract()
    assert abstract.shape == (BATCH, TIME, 4) and abstract.dtype == np.float32
    assert space.to_abstract(8, 5).shape == (8, 5, 4)
    assert Box((4,), batch=True, time=True, time_major=True).to_abstract(8, 5).shape == (5, 8, 4)


def test_box_sample_contains_and_zeros():
    space = Box((3,), low=-1.0, high=[0.0, 1.0, 2.0], batch=True)
    values = space.sample(seed=0, batch_size=1000)
    assert values.shape == (1000, 3) and values.dtype == np.float32
    assert space.contains(values)
    assert (values >= -1).all() and (values <= np.array([0, 1, 2])).all()
    assert space.contains(space.zeros(batch_size=2))
    assert not space.contains(values.astype(np.float64))  # dtype is part of the space
    assert not space.contains(values[:, :2])
    bad = values.copy()
    bad[0, 0] = np.nan
    assert not space.contains(bad)
    bad[0, 0] = 5.0
    assert not space.contains(bad)


def test_box_unbounded_and_half_bounded_samples():
    half = Box((1000,), low=2.0)
    assert (half.sample(0) >= 2.0).all()
    unbounded = Box((1000,)).sample(0)
    assert abs(unbounded.mean()) < 0.2 and 0.8 < unbounded.std() < 1.2


def test_discrete_bool_key():
    d = Discrete(5, batch=True)
    x = d.sample(1, batch_size=10000)
    assert x.dtype == np.int32 and x.min() == 0 and x.max() == 4
    counts = np.bincount(x, minlength=5) / len(x)
    np.testing.assert_allclose(counts, 0.2, atol=0.02)
    assert d.contains(x) and not d.contains(x + 1)
    assert Bool((2,)).contains(np.array([True, False]))
    key = PRNGKey()
    assert key.contains(np.asarray(jax.random.PRNGKey(3)))
    assert key.to_abstract().shape == (2,)


def test_containers():
    space = Dict(obs=Box((4,)), mask=Bool((2,)), batch=True)
    assert space.short() == "{mask, obs}"
    value = space.sample(0, batch_size=3)
    assert set(value) == {"obs", "mask"} and value["obs"].shape == (3, 4)
    assert space.contains(value)
    assert not space.contains({"obs": value["obs"]})
    abstract = space.to_abstract(7)
    assert abstract["mask"].shape == (7, 2)
    tup = Tuple((Discrete(2), Box(())))
    assert tup.contains(tup.sample(0)) and len(tup) == 2
    assert str(tup) == "Tuple(int32[], float32[])"
    assert Dict(a=Box(())) == Dict({"a": Box(())})


class Step(NamedTuple):
    obs: object
    reward: object
    extras: object = None


def test_record_keeps_the_namedtuple_type_and_its_none_fields():
    space = Record(Step, obs=Box((3,)), reward=Box(()), batch=True)
    assert space.short() == "Step{obs, reward}"
    value = space.sample(0, batch_size=2)
    assert type(value) is Step and value.extras is None and value.obs.shape == (2, 3)
    assert space.contains(value)
    assert not space.contains(value._replace(extras={}))     # a field without a space is None
    assert not space.contains(tuple(value))                  # a plain tuple is not a Step
    abstract = space.to_abstract(5)
    assert type(abstract) is Step and abstract.reward.shape == (5,)
    flowed = space_of(Step(np.zeros((2, 3), np.float32), np.zeros(2, np.float32)), 2)
    assert flowed == space and flowed != Tuple((Box((3,), batch=True), Box((), batch=True)))
    with pytest.raises(TypeError, match="no fields"):
        Record(Step, done=Box(()))
    with pytest.raises(TypeError, match="NamedTuple"):
        Record(tuple, obs=Box(()))


def test_space_of_recognises_symbolic_ranks():
    assert str(space_of(jax.ShapeDtypeStruct((BATCH, 4), np.float32))) == "float32[B,4]"
    assert str(space_of(jax.ShapeDtypeStruct((TIME, BATCH), np.int32))) == "int32[T,B]"
    assert space_of({"a": np.zeros(2, np.float32)}) == Dict(a=Box((2,)))
    with pytest.raises(TypeError, match="str"):
        space_of("not an array")


@pytest.mark.parametrize("bad", [
    lambda: Box((4,), dtype=np.float64),      # JAX would silently narrow it
    lambda: Box((-1,)),
    lambda: Box((2,), low=1.0, high=0.0),
    lambda: Box((2,), dtype=np.bool_),
    lambda: Discrete(0),
    lambda: Discrete(3, dtype=np.float32),
    lambda: Box((2,), low=[0.0, 1.0, 2.0]),
])
def test_invalid_spaces_raise(bad):
    with pytest.raises(ValueError):
        bad()
