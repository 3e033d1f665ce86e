"""BernsteinFusion.predict_interval: bootstrap refits (n_bootstrap), their determinism,
persistence and refusals, and coverage of a known truth."""

from __future__ import annotations

import io

import numpy as np
import pytest

import fusion
from fusion import BernsteinFusion
from fusion.bernstein import newton
from fusion.bernstein.binary import bootstrap
from fusion.bernstein.binary.source import MemoryRows
from fusion.bernstein.scale import OwnScale
from fusion.bernstein.structure import Structure

from ...conftest import simulate


@pytest.fixture(scope="module")
def fitted():
    S, y, _ = simulate(1500, seed=4)
    return BernsteinFusion(n_bootstrap=40).fit(S, y), S


def test_bounds_are_ordered_monotone_and_contain_most_of_the_truth(fitted):
    model, _ = fitted
    S_test, _, p_test = simulate(4000, seed=77)
    lo, hi = model.predict_interval(S_test, alpha=0.1)
    assert lo.shape == hi.shape == (4000,)
    assert np.all(lo <= hi) and np.all(lo > 0) and np.all(hi < 1)
    # a 90 % interval of an undersmoothed bootstrap: most of the true probabilities inside
    # (0.73-0.92 in benchmarks/bench_interval.py), far more than a degenerate interval
    assert np.mean((p_test >= lo) & (p_test <= hi)) > 0.6
    # a wider level gives wider intervals
    lo50, hi50 = model.predict_interval(S_test, alpha=0.5)
    assert np.all(lo <= lo50 + 1e-12) and np.all(hi50 <= hi + 1e-12)
    # each bound is a pointwise quantile of monotone functions: monotone in every score
    g = np.linspace(-3, 3, 40)
    G = np.column_stack([np.repeat(g, 40), np.tile(g, 40)])
    for bound in model.predict_interval(G):
        B = bound.reshape(40, 40)
        assert np.all(np.diff(B, axis=0) >= -1e-12) and np.all(np.diff(B, axis=1) >= -1e-12)


def test_bootstrap_refit_of_the_unresampled_data_is_the_fit(fitted):
    # the refits' Newton solve, on the fitted model's own basis and penalty and every row
    # taken once, lands on the fitted coefficients: the refits fit the same model
    model, S = fitted
    y = simulate(1500, seed=4)[1]
    assert model.n_cells_ is None  # a fit on rows
    U = model.ecdf_.transform(S)
    Z = OwnScale.fit(model.base, model.ecdf_).features(U, S)
    basis = Structure.of(model.degree_, model.components_)
    source = MemoryRows(U, S, y, np.ones(S.shape[0]))
    settings = {"eps_abs": model.eps_abs, "eps_rel": model.eps_rel, "max_iter": model.max_iter}
    coef = bootstrap.logistic_refits(
        source, Z, basis, [model.lam_], [np.ones(S.shape[0])], settings,
        newton.base_ridge(S.shape[0]),
    )  # fmt: skip
    x = np.concatenate([model.base_coef_, np.ravel(model.coef_)])
    p_refit = bootstrap.logistic_proba(coef, basis, U, Z, 35.0)[:, 0]
    np.testing.assert_allclose(p_refit, model.predict_proba(S)[:, 1], atol=2e-3)
    assert np.max(np.abs(coef[0] - x)) < 0.05 * max(1.0, np.max(np.abs(x)))


def test_rich_basis_adds_resolution_along_every_score():
    basis = bootstrap.interval_basis(Structure.of((8, 8), ((0, 1),)))
    assert basis.components == (((0, 1), (8, 8)), ((0,), (16,)), ((1,), (16,)))
    additive = bootstrap.interval_basis(Structure.of((6, 6, 6), ((0,), (1,), (2,))))
    assert additive.components[0] == ((0, 1, 2), (3, 3, 3))


def test_bootstrap_is_deterministic_and_saved(fitted, tmp_path):
    # determinism on a smaller fit than the fixture's (a third of its time), still with a
    # finite penalty chosen again on every resample (a grid without inf)
    S2, y2, _ = simulate(800, seed=4)
    kw = dict(n_bootstrap=10, degree=4, lam_grid=[1.0, 0.1, 0.01, 1e-3, 1e-4])
    first = BernsteinFusion(**kw).fit(S2, y2)
    again = BernsteinFusion(**kw).fit(S2.copy(), y2.copy())
    assert np.isfinite(first.lam_)
    np.testing.assert_array_equal(again.bootstrap_coef_, first.bootstrap_coef_)
    model, S = fitted
    buf = io.BytesIO()
    model.save(buf)
    buf.seek(0)
    loaded = fusion.load(buf)
    for a, b in zip(loaded.predict_interval(S), model.predict_interval(S), strict=True):
        np.testing.assert_array_equal(a, b)


def test_rank_only_model_has_intervals_too():
    S, y, p = simulate(1500, seed=5)
    model = BernsteinFusion(base=None, degree=3, n_bootstrap=30).fit(S, y)
    # the fitted tensor (4 x 4) and a univariate component of twice its degree per score
    assert model.bootstrap_coef_.shape == (30, 16 + 7 + 7)
    lo, hi = model.predict_interval(S)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))
    assert np.mean((p >= lo) & (p <= hi)) > 0.5


def test_refusals():
    S, y, _ = simulate(300, seed=6)
    plain = BernsteinFusion(lam=1e-2).fit(S, y)
    assert plain.bootstrap_coef_ is None
    with pytest.raises(ValueError, match="n_bootstrap > 0"):
        plain.predict_interval(S)
    boot = BernsteinFusion(lam=1e-2, n_bootstrap=3).fit(S, y)
    for alpha in (0.0, 1.0, -0.1, "0.1"):
        with pytest.raises(ValueError, match="alpha"):
            boot.predict_interval(S, alpha=alpha)
    with pytest.raises(ValueError, match="n_bootstrap"):
        BernsteinFusion(n_bootstrap=-1).fit(S, y)


def test_rank_only_intervals_depend_on_the_ranks_only():
    # the rank-only model's refits live on the normalized scores, as its fit: a strictly
    # increasing transform of every score leaves the intervals unchanged (at the training
    # scores: between them the ECDF interpolates on the scores' own scale)
    S, y, _ = simulate(600, seed=9)
    St = S[:300]
    a = BernsteinFusion(base=None, degree=2, n_bootstrap=8).fit(S, y)
    b = BernsteinFusion(base=None, degree=2, n_bootstrap=8).fit(np.exp(S), y)
    for lo_hi_a, lo_hi_b in zip(
        a.predict_interval(St), b.predict_interval(np.exp(St)), strict=True
    ):
        np.testing.assert_allclose(lo_hi_a, lo_hi_b, atol=1e-9)
