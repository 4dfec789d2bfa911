"""Testing helpers: `ComponentTest` runs one component alone on a chosen backend."""

from metagraph.testing.component_test import (
    BACKENDS,
    ComponentTest,
    assert_tree_almost_equal,
    backend_names,
)

__all__ = ["BACKENDS", "ComponentTest", "assert_tree_almost_equal", "backend_names"]
