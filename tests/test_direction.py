"""fusion/_direction.py: resolving ``increasing`` and the anti-alignment statistic."""

import numpy as np
import pytest

from fusion._direction import anti_alignment_z, resolve_increasing


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("auto", [None, None]),
        (True, [True, True]),
        (False, [False, False]),
        ([True, "auto"], [True, None]),
        (np.array([False, True]), [False, True]),
    ],
)
def test_resolve_increasing(value, expected):
    assert resolve_increasing(value, 2) == expected


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("up", "True, False or 'auto'"),
        ([True], "1 entries but there are 2 score columns"),
        ([True, 1], r"increasing\[1\] must be a bool"),
        (0.5, "sequence of those"),
    ],
)
def test_resolve_increasing_rejects_bad_values(value, match):
    with pytest.raises(ValueError, match=match):
        resolve_increasing(value, 2)


def test_anti_alignment_z_has_the_sign_and_size_of_the_evidence():
    rng = np.random.default_rng(0)
    n = 2000
    y = rng.integers(0, 2, n).astype(float)
    w = np.ones(n)
    u_pos = (np.argsort(np.argsort(y + rng.normal(size=n))) + 0.5) / n
    u_neg = 1.0 - u_pos
    u_null = rng.random(n)
    assert anti_alignment_z(u_pos, y, w) > 10
    assert anti_alignment_z(u_neg, y, w) < -10
    zs = [anti_alignment_z(np.random.default_rng(s).random(n), y, w) for s in range(200)]
    # approximately standard normal under independence
    assert abs(np.mean(zs)) < 0.3 and 0.7 < np.std(zs) < 1.3
    assert abs(anti_alignment_z(u_null, y, w)) < 4
