"""Regression tests for data that made MR-MIC run for minutes (issue 14): ties, binary and
few-valued scores, extreme imbalance, many scores. Each uses a small analogue that exercises
the same mechanism; OSQP's iteration counts are deterministic, so they are bounded instead
of the time (no timed assertion)."""

import numpy as np
import pytest
from scipy.special import expit

from fusion import MRMICFusion


def latent(n, seed, M=2):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    S = z[:, None] + rng.normal(size=(n, M))
    y = (rng.uniform(size=n) < expit(2 * z)).astype(int)
    return S, y, rng


def check_sensible(model, S, y):
    """Probabilities in (0, 1), monotone at the training points, mean label kept."""
    p = model.predict_proba(S)[:, 1]
    assert np.all((p > 0) & (p < 1))
    P, f = model.train_scores_, model.train_proba_
    hi, lo = np.nonzero(np.all(P[:, None] >= P[None], axis=2))
    assert np.all(f[hi] >= f[lo])
    # The Laplacian and the edge rows sum to zero, so the optimum keeps the weighted mean
    # of the targets (up to OSQP's tolerance).
    assert model.train_weights_ @ f / model.train_weights_.sum() == pytest.approx(
        y.mean(), abs=1e-4
    )


def ties_in_one_score(n, seed):
    S, y, rng = latent(n, seed)
    S[rng.uniform(size=n) < 0.99, 0] = 0.0
    return S, y


def binary_score(n, seed):
    S, y, _ = latent(n, seed)
    S[:, 0] = S[:, 0] > 0
    return S, y


@pytest.mark.parametrize("make", [ties_in_one_score, binary_score])
def test_long_chains_of_comparable_points_converge_quickly(make):
    # 99 % ties in one score, or a binary score, leave long chains of comparable points on
    # which ADMM crawls: the old settings (box rows, rho = 1) took ~3,500 iterations per
    # solve here, and minutes at n = 2,000; now a few hundred.
    S, y = make(300, 0)
    model = MRMICFusion(lam=1e-4).fit(S, y)
    assert model.solver_status_ == "solved"
    assert model.n_iter_ <= 1500
    check_sensible(model, S, y)


def test_few_valued_scores_merge_to_few_points():
    S, y, _ = latent(2000, 1)
    S = np.round(S)  # about 7 values per score
    model = MRMICFusion(cv=3).fit(S, y)
    assert model.train_scores_.shape[0] == np.unique(S, axis=0).shape[0] < 100
    np.testing.assert_allclose(model.train_weights_.sum(), 2000)
    check_sensible(model, S, y)


def test_one_positive_among_many_rows():
    # The QP is capped at max_points cells, whatever n (here 2,000 rows into 60 cells).
    rng = np.random.default_rng(2)
    S = rng.normal(size=(2000, 2))
    y = np.zeros(2000, dtype=int)
    y[np.argmax(S.sum(axis=1))] = 1
    model = MRMICFusion(max_points=60, cv=3).fit(S, y)
    assert model.train_scores_.shape[0] <= 60 < model.n_distinct_points_ == 2000
    check_sensible(model, S, y)
    p = model.predict_proba(S)[:, 1]
    assert p[y == 1][0] == p.max()


def test_many_scores_avoid_the_high_dimensional_triangulation():
    # At M = 6 the Delaunay triangulation of the linear rule has ~1,600 simplices per point
    # (2 minutes at n = 2,000); "auto" uses the monotone rule from M = 5 on.
    S, y, _ = latent(150, 3, M=6)
    model = MRMICFusion(cv=3).fit(S, y)
    assert model.interpolation_ == "monotone" and model.monotone_
    check_sensible(model, S, y)
    assert MRMICFusion(lam=1e-3).fit(S[:, :4], y).interpolation_ == "linear"


def test_default_fit_on_large_data_is_bounded_by_max_points():
    S, y, _ = latent(3000, 4)
    model = MRMICFusion(max_points=80, lam_grid=[1e-4, 1e-2], cv=2).fit(S, y)
    assert model.train_scores_.shape[0] <= 80 and model.n_distinct_points_ == 3000
    check_sensible(model, S, y)
