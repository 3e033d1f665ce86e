"""Property-based tests over random data shapes and seeds, for every registered method.

- outputs are finite probabilities inside (0, 1), in and far outside the training range;
- fitting is deterministic for a fixed ``random_state``;
- fitted models that guarantee monotonicity (the fitted ``monotone_`` where the method sets
  it, else the class's ``_monotone``) are non-decreasing in every score on dense grids;
- predictions at the training points and at new points are unchanged under strictly
  increasing transforms of each score column (everything goes through the rank-based ECDF,
  which places a new score by its position among the training scores).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.special import expit
from sklearn.base import clone

import fusion

from ._methods import (
    FAST_PARAMS,
    METHOD_NAMES,
    MONOTONE_PARAMS,
    RANDOMIZED_PARAMS,
    RANK_ONLY_PARAMS,
    make,
    scores,
)

pytestmark = pytest.mark.filterwarnings("error")
by_name = pytest.mark.parametrize("name", METHOD_NAMES)

_SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def datasets(draw, max_m: int = 3):
    """Scores related to the label through a monotone link, on varied scales with ties."""
    n = draw(st.integers(40, 120))
    M = draw(st.integers(2, max_m))
    seed = draw(st.integers(0, 2**32 - 1))
    strength = draw(st.sampled_from([0.0, 0.5, 2.0]))
    noise = draw(st.sampled_from(["normal", "cauchy", "uniform"]))
    decimals = draw(st.sampled_from([None, 1, 2]))
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(strength * z)).astype(int)
    eps = {
        "normal": lambda: rng.normal(size=(n, M)),
        "cauchy": lambda: rng.standard_cauchy(size=(n, M)),
        "uniform": lambda: rng.uniform(-1, 1, size=(n, M)),
    }[noise]()
    S = z[:, None] + eps
    if decimals is not None:
        S = np.round(S, decimals)  # ties
    assume(0 < y.sum() < n)
    assume(all(np.unique(S[:, j]).size > 1 for j in range(M)))
    return S, y, seed


def _fit(name, S, y, **params):
    # The scores are drawn increasing with P(y = 1) or independent of y; with independent
    # scores increasing="auto" may (rightly, at p < 0.001) reverse one by chance, with a
    # warning that this module treats as an error. Directions are tested elsewhere.
    return make(name, **{"increasing": True, **params}).fit(S, y)


def _check_probabilities(p, n):
    assert p.shape == (n, 2)
    assert np.all(np.isfinite(p))
    assert np.all((p > 0.0) & (p < 1.0))  # never exactly 0 or 1 (proba_bounds_)


@by_name
@_SETTINGS
@given(data=datasets(), spread=st.sampled_from([1.0, 1e3, 1e150]))
def test_probabilities_are_finite_inside_the_open_unit_interval(name, data, spread):
    S, y, seed = data
    est = _fit(name, S, y)
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=spread, size=(50, S.shape[1]))
    for Z in (S, X):
        _check_probabilities(est.predict_proba(Z), Z.shape[0])
    U = rng.random((50, S.shape[1]))
    U[:4] = [[0.0] * S.shape[1], [1.0] * S.shape[1], [0.0, 1.0] + [0.5] * (S.shape[1] - 2), U[3]]
    f = est.calibrating_function(U)
    assert np.all(np.isfinite(f)) and np.all((f > 0) & (f < 1))


@by_name
@_SETTINGS
@given(data=datasets(), random_state=st.integers(0, 2**31 - 1))
def test_fit_is_deterministic_for_fixed_random_state(name, data, random_state):
    S, y, _ = data
    est = make(name, RANDOMIZED_PARAMS, increasing=True)
    if "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    with warnings.catch_warnings():  # small test grids: edge picks warn
        warnings.filterwarnings("ignore", "cross-validation picked", UserWarning)
        a = clone(est).fit(S, y)
        b = clone(est).fit(S, y)
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(S))
    grid = np.random.default_rng(0).random((30, S.shape[1]))
    np.testing.assert_array_equal(a.calibrating_function(grid), b.calibrating_function(grid))


def _grid_axes(M: int) -> int:
    return {2: 61, 3: 17}[M]


def _monotone_cases():
    """(name, parameters) of every configuration that can guarantee monotonicity."""
    cases = []
    for name in METHOD_NAMES:
        configs = [FAST_PARAMS.get(name, {})] if fusion.METHODS[name]._monotone else []
        configs += MONOTONE_PARAMS.get(name, [])
        cases += [pytest.param(name, p, id=f"{name}-{i}") for i, p in enumerate(configs)]
    return cases


def _guarantees_monotone(est) -> bool:
    """The fitted model's own guarantee where it reports one, else the class's."""
    return bool(getattr(est, "monotone_", type(est)._monotone))


@pytest.mark.parametrize("name, params", _monotone_cases())
@_SETTINGS
@given(data=datasets())
def test_monotone_on_dense_grid(name, params, data):
    S, y, _ = data
    est = fusion.METHODS[name](**{"increasing": True, **params}).fit(S, y)
    # A data-dependent guarantee (e.g. RPR's logistic combine with a negative coefficient)
    # can be off for some data; those examples say nothing about monotonicity.
    assume(_guarantees_monotone(est))
    M = S.shape[1]
    k = _grid_axes(M)
    # In normalized coordinates, including the cube's faces...
    axes = np.meshgrid(*[np.linspace(0, 1, k)] * M, indexing="ij")
    f = est.calibrating_function(np.stack([a.ravel() for a in axes], 1)).reshape((k,) * M)
    # ...and in raw scores, beyond the training range on both sides.
    lo, hi = S.min(0), S.max(0)
    width = hi - lo
    raw = np.meshgrid(
        *[np.linspace(lo[j] - width[j], hi[j] + width[j], k) for j in range(M)], indexing="ij"
    )
    g = est.predict_proba(np.stack([a.ravel() for a in raw], 1))[:, 1].reshape((k,) * M)
    for values in (f, g):
        for axis in range(M):
            steps = np.diff(values, axis=axis)
            assert steps.min() >= -1e-12, f"decreases by {-steps.min():.3g} along axis {axis}"


def _rank_transform(col):
    """The rank of a score among the training scores, extended linearly beyond them:
    strictly increasing on the reals, and far from any smooth map."""
    u = np.unique(col)
    r = np.arange(u.size, dtype=float)
    return lambda x: np.interp(x, u, r) + np.minimum(x - u[0], 0.0) + np.maximum(x - u[-1], 0.0)


#: Strictly increasing maps, each made from a training column (so that its new points get
#: the same map).
_TRANSFORMS = {
    "cube": lambda col: lambda x: x**3,
    "exp": lambda col: (lambda c: lambda x: np.exp(x / c))(np.abs(col).max() + 1.0),
    "affine": lambda col: lambda x: 7.0 * x - 3.0,
    "arctan": lambda col: np.arctan,
    "rank": _rank_transform,
}


def _new_points(S, seed, k=40):
    """Rows of scores mostly not in S: midpoints between adjacent training values, points
    beyond the training range, uniform points in it, and (ties) some training values."""
    rng = np.random.default_rng(seed)
    cols = []
    for j in range(S.shape[1]):
        u = np.unique(S[:, j])
        width = u[-1] - u[0]
        pool = np.r_[
            (u[1:] + u[:-1]) / 2,
            u[0] - width * rng.random(3) - 1e-3,
            u[-1] + width * rng.random(3) + 1e-3,
            rng.uniform(u[0], u[-1], 10),
            u[:: max(1, u.size // 5)],
        ]
        cols.append(rng.choice(pool, k))
    return np.column_stack(cols)


@by_name
@_SETTINGS
@given(data=datasets(), picks=st.lists(st.sampled_from(sorted(_TRANSFORMS)), min_size=3))
def test_invariant_under_increasing_transforms(name, data, picks):
    """At the training points and at new ones (between training values, beyond them, tied
    with them): a rank-based model normalizes a new score by its position among the
    training scores, so the predictions are equal bit for bit."""
    S, y, seed = data
    X = _new_points(S, seed)
    maps = [_TRANSFORMS[picks[j]](S[:, j]) for j in range(S.shape[1])]
    T = np.column_stack([g(S[:, j]) for j, g in enumerate(maps)])
    Y = np.column_stack([g(X[:, j]) for j, g in enumerate(maps)])
    # The transforms are strictly increasing on the reals; in floating point they must also
    # keep distinct values distinct (and in order) for the positions to be unchanged.
    for j in range(S.shape[1]):
        both, moved = np.r_[S[:, j], X[:, j]], np.r_[T[:, j], Y[:, j]]
        order = np.argsort(both, kind="stable")
        assume(np.array_equal(np.diff(moved[order]) > 0, np.diff(both[order]) > 0))
    params = {"random_state": seed % 2**31} if "random_state" in make(name).get_params() else {}
    params = {**RANK_ONLY_PARAMS.get(name, {}), **params}
    a = _fit(name, S, y, **params)
    b = _fit(name, T, y, **params)
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(T))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(Y))


@pytest.mark.skipif("mrmic" not in fusion.METHODS, reason="mrmic is not registered")
def test_mrmic_monotone_flag_follows_interpolation():
    S, y = scores(60)
    for interpolation in ("linear", "monotone"):
        est = fusion.MRMICFusion(lam=1e-3, interpolation=interpolation).fit(S, y)
        assert est.monotone_ is (interpolation == "monotone")
