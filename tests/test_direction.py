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


def test_label_ranks_count_the_classes_scored_below_the_label():
    from fusion._direction import label_rank_sums, label_rank_z

    rng = np.random.default_rng(3)
    n, M, C = 300, 2, 6
    S = rng.normal(size=(n, M, C))
    S[:5, 0, :] = 0.0  # ties: every other class counts one half
    index = rng.integers(0, C, n)
    w = rng.random(n)
    sums = label_rank_sums(S, index, w)
    for m in range(M):
        ranks = [
            np.sum(S[i, m] < S[i, m, index[i]]) + 0.5 * (np.sum(S[i, m] == S[i, m, index[i]]) - 1)
            for i in range(n)
        ]
        assert sums[0, m] == pytest.approx(np.dot(w, np.array(ranks) - (C - 1) / 2))
    np.testing.assert_allclose(sums[1:], [[w.sum()] * M, [np.dot(w, w)] * M])
    # the same for logits, log-probabilities and probabilities (a row's order)
    P = np.exp(S) / np.exp(S).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(label_rank_sums(P, index, w), sums)
    # blocks of rows add up
    halves = label_rank_sums(S[:100], index[:100], w[:100]) + label_rank_sums(
        S[100:], index[100:], w[100:]
    )
    np.testing.assert_allclose(halves, sums)
    assert label_rank_z(sums, C).shape == (M,)


def test_label_rank_z_is_standard_normal_without_information_and_signed_with_it():
    from fusion._direction import label_rank_sums, label_rank_z

    rng = np.random.default_rng(4)
    n, C = 400, 7
    z = []
    for _ in range(400):
        S = rng.normal(size=(n, 1, C))
        z.append(label_rank_z(label_rank_sums(S, rng.integers(0, C, n), np.ones(n)), C)[0])
    assert abs(np.mean(z)) < 0.15 and 0.85 < np.std(z) < 1.15
    index = rng.integers(0, C, n)
    S = rng.normal(size=(n, 2, C))
    S[np.arange(n), 0, index] += 1.0  # the label scored higher: aligned
    S[np.arange(n), 1, index] -= 1.0  # lower: reads "lower is more likely"
    z = label_rank_z(label_rank_sums(S, index, np.ones(n)), C)
    assert z[0] > 5 and z[1] < -5
