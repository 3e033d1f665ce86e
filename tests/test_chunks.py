"""fusion._chunks: row blocks give the one-pass result bit for bit."""

import numpy as np

from fusion._chunks import by_rows
from fusion._cv import content_keys
from fusion.bernstein.binary.cells import cell_index
from fusion.ecdf.sketch import _hash_block


def test_by_rows_equals_one_pass_for_the_fits_elementwise_steps():
    rng = np.random.default_rng(0)
    n = 3 * 1000 + 7
    U, Z = rng.random((n, 2)), rng.normal(size=(n, 2))
    y = (rng.random(n) < 0.4).astype(float)
    edges = (16, np.array([-2.0, -2.0]), np.array([2.0, 2.0]))
    idx, dims = cell_index(U, Z, edges)
    assert dims == (31, 31)
    np.testing.assert_array_equal(
        idx, by_rows(lambda u, z: cell_index(u, z, edges)[0], U, Z, size=1000)
    )
    np.testing.assert_array_equal(
        content_keys(U, y, 3), by_rows(lambda u, t: content_keys(u, t, 3), U, y, size=1000)
    )
    x = rng.standard_t(2, size=n)
    np.testing.assert_array_equal(_hash_block(x), by_rows(_hash_block, x, size=1000))
    # shapes beyond the first axis are kept; short inputs are one call
    A = rng.random((n, 3))
    np.testing.assert_array_equal(by_rows(lambda a: a * 2, A, size=1000), A * 2)
    assert by_rows(lambda a: a + 1, A[:5], size=1000).shape == (5, 3)
