"""`Discrete(n)`: every value in [0, n) must fit the space's dtype."""

import numpy as np
import pytest

from metagraph.spaces import Discrete


@pytest.mark.parametrize("n,dtype", [(2**40, np.int32), (2**31 + 1, np.int32), (257, np.uint8),
                                     (129, np.int8)])
def test_n_beyond_the_dtype_is_refused(n, dtype):
    with pytest.raises(ValueError, match=rf"Discrete: n={n} does not fit dtype "
                                         rf"{np.dtype(dtype)} \(largest value "
                                         rf"{np.iinfo(dtype).max}\)"):
        Discrete(n, dtype=dtype)


@pytest.mark.parametrize("n,dtype", [(2**31, np.int32), (256, np.uint8), (128, np.int8)])
def test_the_largest_n_that_fits_is_accepted(n, dtype):
    space = Discrete(n, dtype=dtype)
    assert space.contains(np.array(n - 1, dtype)) and space.n == n
