"""`metagraph.differentiate.copy_parameters`: one component's parameters onto another's of the
same shape inside an API (a policy's snapshot into an opponent pool), everywhere or where a
traced flag holds; components of other parameters are refused naming the difference."""

import jax
import numpy as np
import pytest

import metagraph as mg
from components.networks import MLP
from metagraph.differentiate import copy_parameters
from metagraph.spaces import Bool, Box
from metagraph.testing import ComponentTest


class Snapshots(mg.Component):
    """A network and a copy of it taken when asked."""

    def __init__(self, copy_widths=(8, 2)):
        super().__init__()
        self.live, self.kept = MLP([8, 2]), MLP(list(copy_widths))

    @mg.api
    def outputs(self, x):
        return self.live.forward(x), self.kept.forward(x)

    @mg.api
    def snapshot(self, x, take):
        self.outputs(x)
        copy_parameters(self.live, self.kept, where=take)


SPACES = {"x": Box((3,), batch=True), "take": Bool(())}


def test_the_copy_is_taken_where_asked_and_only_there():
    test = ComponentTest(Snapshots(), SPACES)
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    live, kept = (np.asarray(y) for y in test.outputs(x))
    assert not np.allclose(live, kept)  # two initialisations
    before = jax.tree.map(np.asarray, test.get_state("snapshots/kept"))
    test.snapshot(x, np.bool_(False))
    jax.tree.map(np.testing.assert_array_equal, test.get_state("snapshots/kept"), before)
    test.snapshot(x, np.bool_(True))
    live, kept = (np.asarray(y) for y in test.outputs(x))
    np.testing.assert_array_equal(live, kept)
    jax.tree.map(np.testing.assert_array_equal, test.get_state("snapshots/kept"),
                 test.get_state("snapshots/live"))


def test_components_of_other_parameters_are_refused():
    with pytest.raises(mg.SpaceError, match="copy_parameters: snapshots/live") as error:
        ComponentTest(Snapshots(copy_widths=(8, 2, 2)), SPACES)
    assert "not the same parameters" in str(error.value)


def test_outside_an_api_it_says_so():
    with pytest.raises(mg.MetaGraphError, match=r"^copy_parameters\(MLP\) called outside a "
                                                r"graph: use it inside an API"):
        copy_parameters(MLP([2]), MLP([2]))
