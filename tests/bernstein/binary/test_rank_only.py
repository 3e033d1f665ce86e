"""The rank-only model's structure="auto" from M = 3 on: additive, pairwise and tensor
candidates chosen jointly with the degree by cross-validation of the Brier score."""

import warnings

import numpy as np
import pytest
from scipy.special import expit, ndtr

import fusion
from fusion import BernsteinFusion
from fusion.bernstein.basis import make_components
from fusion.bernstein.plan import (
    DEFAULT_DEGREE_GRID,
    RANK_ONLY_AUTO_COEFFICIENTS,
    rank_only_candidates,
)
from fusion.bernstein.structure import Structure

BUDGET = RANK_ONLY_AUTO_COEFFICIENTS


def _sim(kind: str, n: int, M: int, seed: int):
    """Independent standard normal scores (u_m = Phi(z_m)) and labels from a known truth."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, M))
    if kind == "additive":  # a sum of curved functions of each score
        p = 0.05 + 0.9 * ndtr(2 * z).mean(1)
    elif kind == "interaction":  # scores 0 and 1 act only together
        p = 0.05 + 0.9 * ndtr(1.5 * z[:, 0]) * ndtr(1.5 * z[:, 1])
    else:  # logistic in the sum: interactions of every order on the probability scale
        p = expit(2 * z.sum(1) / np.sqrt(M))
    return z, (rng.random(n) < p).astype(int), p


def n_coef(degrees, structure, M):
    return Structure.named(structure, degrees).n_coef


def _fit(S, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a degree at the edge of the grid
        return BernsteinFusion(base=None, **params).fit(S, y)


@pytest.fixture(scope="module")
def fits():
    """Auto fits with interactions at M = 4 and 6 (n = 3,000), on the scores and on strictly
    increasing transforms of them, fitted once for the tests below."""
    out = {}
    transforms = [
        lambda x: np.exp(x / 2),
        lambda x: x**3 + x,
        lambda x: 3 * x - 1,
        np.arctan,
        lambda x: np.tanh(x / 3),
        lambda x: -1 / (x + 10),
    ]
    for M, kind in ((4, "interaction"), (6, "logistic")):
        S, y, p = _sim(kind, 3000, M, seed=M)
        T = np.column_stack([transforms[m](S[:, m]) for m in range(M)])
        for m in range(M):  # strictly increasing in floating point too: the ranks are equal
            order = np.argsort(S[:, m])
            assert np.all(np.diff(T[order, m]) > 0)
        out[M] = (S, y, p, T, _fit(S, y), _fit(T, y))
    return out


def test_two_scores_keep_the_tensor_and_degree_keys():
    S, y, _ = _sim("logistic", 1500, 2, seed=0)
    model = _fit(S, y, degree_grid=[1, 2, 3])
    assert model.components_ == ((0, 1),)
    assert list(model.cv_scores_) == [(1, 1), (2, 2), (3, 3)]


@pytest.mark.parametrize("M", [3, 4, 6, 10])
def test_candidates_are_every_structure_within_the_budget(M):
    model = BernsteinFusion(base=None)
    cands, edges = rank_only_candidates(model, M, 8000)
    by_structure = {}
    for structure, degrees, components in cands:
        assert components.axes == make_components(structure, M)
        by_structure.setdefault(structure, []).append(degrees[0])
    # every additive degree; tensor and pairwise exactly the grid's degrees within the budget
    assert by_structure["additive"] == list(DEFAULT_DEGREE_GRID)
    for structure in ("pairwise", "tensor"):
        want = [k for k in DEFAULT_DEGREE_GRID if n_coef((k,) * M, structure, M) <= BUDGET]
        assert by_structure.get(structure, []) == want
    # only the additive grid's end warns: the others were cut by the budget
    assert edges == {len(DEFAULT_DEGREE_GRID) - 1}
    # max_coefficients still bounds every structure
    small = rank_only_candidates(BernsteinFusion(base=None, max_coefficients=40), M, 8000)[0]
    assert all(n_coef(d, s, M) <= 40 for s, d, _ in small)


def test_fixed_degree_chooses_the_structure_by_cross_validation():
    S, y, _ = _sim("interaction", 3000, 4, seed=1)
    model = _fit(S, y, degree=3)
    assert set(model.cv_scores_) == {(s, (3,) * 4) for s in ("additive", "pairwise", "tensor")}
    assert model.degree_ == (3,) * 4 and len(model.components_) == 6  # pairwise
    # too large for the tensor at max_coefficients: the other two compete
    model = _fit(S, y, degree=6, max_coefficients=1000)
    assert set(model.cv_scores_) == {("additive", (6,) * 4), ("pairwise", (6,) * 4)}
    with pytest.raises(ValueError, match="max_coefficients=10 "):
        _fit(S, y, degree=6, max_coefficients=10)


@pytest.mark.parametrize("M", [4, 6])
def test_invariant_under_strictly_increasing_transforms(fits, M):
    S, y, _, T, a, b = fits[M]
    assert a.components_ == b.components_ and a.degree_ == b.degree_
    assert a.cv_scores_ == b.cv_scores_
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(T))
    # beyond the training range a score counts as the most extreme training score
    lo, hi = S.min(0) - 1, S.max(0) + 1
    corners = np.array([lo, hi])
    np.testing.assert_array_equal(
        a.predict_proba(corners),
        b.predict_proba(np.column_stack([_transformed(T, S, corners, m) for m in range(M)])),
    )


def _transformed(T, S, points, m):
    """Points beyond the training range of column m, mapped beyond T's range on the same side."""
    return np.where(points[:, m] < S[:, m].min(), T[:, m].min() - 1, T[:, m].max() + 1)


@pytest.mark.parametrize("M", [4, 6])
def test_monotone_on_a_dense_grid_and_inside_the_unit_interval(fits, M):
    model = fits[M][4]
    k = {4: 11, 6: 5}[M]
    axes = np.meshgrid(*[np.linspace(0, 1, k)] * M, indexing="ij")
    G = np.column_stack([a.ravel() for a in axes])
    f = model.calibrating_function(G).reshape((k,) * M)
    assert f.min() >= 0 and f.max() <= 1
    for axis in range(M):
        assert np.all(np.diff(f, axis=axis) >= -1e-12)
    # fine sweeps along every axis from random points
    rng = np.random.default_rng(M)
    base = rng.random((40, M))
    t = np.linspace(0, 1, 201)
    for m in range(M):
        P = np.repeat(base, t.size, axis=0)
        P[:, m] = np.tile(t, base.shape[0])
        g = model.calibrating_function(P).reshape(base.shape[0], t.size)
        assert np.all(np.diff(g, axis=1) >= -1e-12) and g.min() >= 0 and g.max() <= 1


@pytest.mark.parametrize("M", [4, 6])
def test_additive_truth_picks_the_additive_structure(M):
    S, y, _ = _sim("additive", 4000, M, seed=M)
    model = _fit(S, y)
    assert all(len(c) == 1 for c in model.components_)
    best = min(model.cv_scores_, key=model.cv_scores_.get)
    assert best[0] == "additive" and best[1] == model.degree_


@pytest.mark.parametrize(("M", "kind"), [(4, "interaction"), (6, "interaction"), (6, "logistic")])
def test_interaction_picks_a_structure_with_interactions(M, kind):
    S, y, _ = _sim(kind, 4000, M, seed=10 + M)
    S_test, _, p_test = _sim(kind, 20_000, M, seed=99)
    model = _fit(S, y)
    assert any(len(c) >= 2 for c in model.components_)
    additive = _fit(S, y, structure="additive")

    def l2(m):
        return np.sqrt(np.mean((m.predict_proba(S_test)[:, 1] - p_test) ** 2))

    assert l2(model) < 0.7 * l2(additive)


def test_many_rows_and_scores_use_a_bounded_number_of_coefficients(tmp_path):
    S, y, _ = _sim("interaction", 10_000, 6, seed=3)
    model = _fit(S, y)
    assert model.coef_.size <= BUDGET
    for (structure, degrees), _ in model.cv_scores_.items():
        if structure != "additive":
            assert n_coef(degrees, structure, 6) <= BUDGET
    # the structured model and its (structure, degrees) cv keys survive a save and a load
    path = tmp_path / "rank_only.fusion"
    model.save(path)
    back = fusion.load(path)
    assert back.components_ == model.components_ and back.cv_scores_ == model.cv_scores_
    np.testing.assert_array_equal(back.predict_proba(S[:500]), model.predict_proba(S[:500]))
