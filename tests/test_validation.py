"""fusion/_validation.py: weights."""

import numpy as np
import pytest

from fusion._validation import check_sample_weight


def test_weights_that_overflow_are_a_clear_error():
    with pytest.raises(ValueError, match="sums to infinity.*divide them by a constant"):
        check_sample_weight(np.full(3, 1e308), 3)
    with pytest.raises(ValueError, match="sums to zero"):
        check_sample_weight(np.zeros(3), 3)
    with pytest.raises(ValueError, match="non-negative.*-1.0 at row 1"):
        check_sample_weight(np.array([1.0, -1.0, 2.0]), 3)
    np.testing.assert_array_equal(check_sample_weight(None, 2), [1.0, 1.0])
