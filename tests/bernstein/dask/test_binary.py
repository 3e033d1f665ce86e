"""BernsteinFusion on dask collections, on a two-process LocalCluster."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

from fusion import BernsteinFusion, ECDFNormalizer, HashFolds
from fusion.bernstein.plan import auto_bins
from fusion.ecdf.sketch import CANDIDATE_FACTOR, hash_candidates, mid_values

from ...conftest import simulate

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

CHUNK = 2500
SMALL_CHUNK = 400  # the `small` data in five blocks


@pytest.fixture(scope="module")
def data():
    S, y, p = simulate(12_000, seed=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.shape[0])
    return S, y, w


@pytest.fixture(scope="module")
def small():
    # the default model's cross-validation on 12,000 rows (degree 12, 2,200 cells) took most
    # of this module's time; its equality with the in-memory fit needs no more than some
    # blocks of rows: 2,000 in five blocks (degree 8, 1,200 cells)
    S, y, _ = simulate(2_000, seed=3)
    return S, y


def _dask(*arrays, chunk=CHUNK):
    return [da.from_array(a, chunks=(chunk,) + a.shape[1:]) for a in arrays]


def test_exact_dask_fit_equals_in_memory_fit(client, data):
    S, y, w = data
    Sd, yd, wd = _dask(S, y, w)
    ref = BernsteinFusion(base=None, degree=4).fit(S, y, sample_weight=w)
    model = BernsteinFusion(base=None, degree=4, ecdf_knots=None).fit(Sd, yd, sample_weight=wd)
    assert model.ecdf_knots_ is None and model.ecdf_error_bound_ == 0.0
    got, want = model.ecdf_, ref.ecdf_
    for a, b in zip(got.knots_ + got.values_, want.knots_ + want.values_, strict=True):
        np.testing.assert_array_equal(a, b)  # merged value counts give the identical ECDF
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-6, rtol=0)
    assert model.solver_status_ == "solved" and list(model.classes_) == [0, 1]
    # the bounds come from the fit alone (no pass over the rows): the same as in memory
    np.testing.assert_allclose(model.proba_bounds_, ref.proba_bounds_, rtol=1e-9, atol=0)
    assert 0 < model.proba_bounds_[0] < model.proba_bounds_[1] < 1


def test_dataframe_input_feature_names_and_string_labels(client, data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    S, y, _ = data
    labels = np.array(["neg", "pos"], dtype=object)[y]
    frame = pd.DataFrame(S, columns=["net_a", "net_b"])
    df = dd.from_pandas(frame, npartitions=5)
    ys = dd.from_pandas(pd.Series(labels), npartitions=5)
    model = BernsteinFusion(degree=3, lam=1e-3, bins=16, ecdf_knots=None).fit(df, ys)
    ref = BernsteinFusion(degree=3, lam=1e-3, bins=16).fit(frame, labels)
    assert list(model.feature_names_in_) == ["net_a", "net_b"]
    assert list(model.classes_) == ["neg", "pos"]
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-6, rtol=0)
    pred = model.predict(df)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), ref.predict(frame))
    with pytest.raises(ValueError, match="feature names"):
        model.predict_proba(df[["net_b", "net_a"]])


def test_predict_proba_is_lazy_blockwise_and_equals_in_memory(client, data):
    S, y, _ = data
    model = BernsteinFusion(degree=3).fit(S, y)
    (Sd,) = _dask(S)
    proba = model.predict_proba(Sd)
    assert isinstance(proba, da.Array)
    assert proba.chunks == (Sd.chunks[0], (2,))
    np.testing.assert_allclose(proba.compute(), model.predict_proba(S), rtol=0, atol=1e-12)


def test_sketched_fit_within_its_ecdf_bound_and_close_to_exact(client, data):
    S, y, _ = data
    Sd, yd = _dask(S, y)
    k = 400
    model = BernsteinFusion(base=None, degree=4, ecdf_knots=k).fit(Sd, yd)
    exact = BernsteinFusion(base=None, degree=4, ecdf_knots=None).fit(Sd, yd)
    bound = model.ecdf_error_bound_
    # the a-priori bound of fusion.ecdf.sketch: level spacing + largest candidate gap
    gaps = []
    for j in range(2):
        x = np.sort(S[:, j])
        cand = np.unique(np.r_[x[0], hash_candidates(np.unique(x), CANDIDATE_FACTOR * k), x[-1]])
        lt, le = np.searchsorted(x, cand, "left"), np.searchsorted(x, cand, "right")
        gaps.append(np.max(np.diff(mid_values(lt, le, x.shape[0]))))
    assert 0 < bound <= 1 / (k - 1) + max(gaps) + 1e-12
    assert all(q.shape[0] <= k for q in model.ecdf_.knots_)
    # the a-posteriori bound holds against the exact normalizer everywhere
    G = ECDFNormalizer().fit(S)
    for j in range(2):
        x = np.sort(S[:, j])  # every training value, midpoints between them, and beyond
        pts = np.concatenate([x, (x[:-1] + x[1:]) / 2, [x[0] - 1, x[-1] + 1]])
        h = np.interp(pts, model.ecdf_.knots_[j], model.ecdf_.values_[j])
        g = np.interp(pts, G.knots_[j], G.values_[j])
        assert np.max(np.abs(h - g)) <= bound + 1e-12
    # Normalized scores move by at most `bound`; f has |df/du_m| <= K, so predictions with the
    # same coefficients move by at most M K bound, and the refit on the perturbed points adds
    # a change of the same order: allow twice that.
    p_s = model.predict_proba(S)[:, 1]
    p_e = exact.predict_proba(S)[:, 1]
    assert np.max(np.abs(p_s - p_e)) <= 2 * 2 * 4 * bound


def test_sketched_rank_only_dask_fit_equals_the_in_memory_one_at_new_points(client, data):
    # The same knots in both (unweighted rows), and both normalize a training score between
    # two knots by its position among them (the step form), so the same fit.
    S, y, _ = data
    Sd, yd = _dask(S, y)
    model = BernsteinFusion(base=None, degree=4, ecdf_knots=300).fit(Sd, yd)
    ref = BernsteinFusion(base=None, degree=4, ecdf_knots=300).fit(S, y)
    for a, b in zip(model.ecdf_.knots_, ref.ecdf_.knots_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-9, rtol=0)
    X = np.random.default_rng(1).normal(size=(500, 2)) * 2
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-9, rtol=0)
    # constant between two knots: every point of a gap, training or new, has the gap's value
    q = ref.ecdf_.knots_[0]
    inside = np.column_stack([q[10] + (q[11] - q[10]) * np.array([0.01, 0.5, 0.99]), [0.0] * 3])
    p = model.predict_proba(inside)[:, 1]
    assert p[0] == p[1] == p[2]


def test_cross_validation_on_dask(client, data):
    S, y, _ = data
    Sd, yd = _dask(S, y)
    grid = [1, 2, 3, 5]
    kw = dict(base=None, degree_grid=grid, random_state=0)
    model = BernsteinFusion(**kw, cv=4, ecdf_knots=None).fit(Sd, yd)
    # every row's fold is its content key modulo the folds, whatever the chunking: the
    # in-memory fit on those folds (HashFolds) and a fit on other chunks agree
    ref = BernsteinFusion(**kw, cv=HashFolds(4, random_state=0)).fit(S, y)
    other = BernsteinFusion(**kw, cv=4, ecdf_knots=None).fit(*_dask(S, y, chunk=SMALL_CHUNK))
    assert list(model.cv_scores_) == list(ref.cv_scores_)
    for d in ref.cv_scores_:
        assert model.cv_scores_[d] == pytest.approx(ref.cv_scores_[d], rel=1e-9)
        assert other.cv_scores_[d] == pytest.approx(model.cv_scores_[d], rel=1e-9)
    assert model.degree_ == ref.degree_ == other.degree_
    assert model.degree_ == min(model.cv_scores_, key=model.cv_scores_.get)
    # the final model is the fixed-degree fit at the chosen degree (totals reused)
    fixed = BernsteinFusion(base=None, degree=model.degree_, ecdf_knots=None).fit(Sd, yd)
    np.testing.assert_allclose(model.coef_, fixed.coef_, atol=1e-6, rtol=0)
    # same random_state, same folds
    again = BernsteinFusion(**kw, cv=4, ecdf_knots=None).fit(Sd, yd)
    assert again.cv_scores_ == model.cv_scores_


def test_mixed_in_memory_and_dask_inputs(client, data):
    S, y, _ = data
    (Sd,) = _dask(S)
    (yd,) = _dask(y)
    ref = BernsteinFusion(base=None, degree=2).fit(S, y)
    a = BernsteinFusion(base=None, degree=2, ecdf_knots=None).fit(Sd, y)  # labels cut like S
    b = BernsteinFusion(base=None, degree=2).fit(S, yd)  # S in memory: labels are gathered
    np.testing.assert_allclose(a.coef_, ref.coef_, atol=1e-6, rtol=0)
    np.testing.assert_allclose(b.coef_, ref.coef_, atol=1e-6, rtol=0)
    # y chunked differently from S is rechunked
    c = BernsteinFusion(base=None, degree=2, ecdf_knots=None).fit(Sd, da.from_array(y, chunks=3001))
    np.testing.assert_allclose(c.coef_, ref.coef_, atol=1e-6, rtol=0)


def test_bad_dask_input_gives_clear_errors(client, data):
    S, y, w = data
    S_nan = S.copy()
    S_nan[CHUNK + 7, 1] = np.nan
    with pytest.raises(ValueError, match=r"finite scores; found NaN at row 7, column 1 of block 1"):
        BernsteinFusion(degree=2).fit(*_dask(S_nan, y))
    with pytest.raises(ValueError, match="exactly two classes"):
        BernsteinFusion(degree=2).fit(*_dask(S, y + (np.arange(y.shape[0]) % 7 == 0)))
    with pytest.raises(ValueError, match="single class"):
        BernsteinFusion(degree=2).fit(*_dask(S, np.ones_like(y)))
    w_neg = w.copy()
    w_neg[3] = -1.0
    with pytest.raises(ValueError, match="non-negative"):
        BernsteinFusion(degree=2).fit(*_dask(S, y, w_neg))
    with pytest.raises(ValueError, match="rows but y has"):
        BernsteinFusion(degree=2).fit(*_dask(S, y[:-5]))
    y_nan = y.astype(float)
    y_nan[10] = np.nan
    with pytest.raises(ValueError, match="y contains NaN at row 10 of block 0"):
        BernsteinFusion(degree=2).fit(*_dask(S, y_nan))
    S_const = S.copy()
    S_const[:, 0] = 1.0
    with pytest.raises(ValueError, match="constant"):
        BernsteinFusion(degree=2).fit(*_dask(S_const, y))
    with pytest.raises(ValueError, match="max_coefficients"):
        BernsteinFusion(degree=80, max_coefficients=100).fit(*_dask(S, y))
    model = BernsteinFusion(degree=2).fit(S, y)
    with pytest.raises(ValueError, match="columns, expected 2"):
        model.predict_proba(da.from_array(np.column_stack([S, S]), chunks=(CHUNK, 4)))
    lazy = model.predict_proba(_dask(S_nan)[0])
    with pytest.raises(ValueError, match="finite scores"):
        lazy.compute()


def test_structured_model_on_dask_equals_in_memory(client):
    rng = np.random.default_rng(5)
    S = rng.normal(size=(6000, 3)) + rng.normal(size=(6000, 1))
    y = (rng.random(6000) < 1 / (1 + np.exp(-S.sum(1) / 2))).astype(int)
    Sd, yd = _dask(S, y)
    for structure in ("additive", "pairwise"):
        ref = BernsteinFusion(base=None, degree=3, structure=structure).fit(S, y)
        model = BernsteinFusion(base=None, degree=3, structure=structure, ecdf_knots=None).fit(
            Sd, yd
        )
        assert model.components_ == ref.components_
        np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-6, rtol=0)


def test_rank_only_structure_choice_on_dask_as_in_memory(client):
    # structure="auto" at M >= 3: the same (structure, degree) candidates on both paths, the
    # held-out scores of the same folds (HashFolds in memory), the pick refitted from the
    # reused totals
    rng = np.random.default_rng(8)
    S = rng.normal(size=(6000, 4))
    p = 0.05 + 0.9 * expit(3 * S[:, 0]) * expit(3 * S[:, 1])
    y = (rng.random(6000) < p).astype(int)
    Sd, yd = _dask(S, y)
    kw = dict(base=None, degree_grid=[1, 2, 3], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a degree at the grid's edge
        ref = BernsteinFusion(**kw, cv=HashFolds(5, random_state=0)).fit(S, y)
        model = BernsteinFusion(**kw, ecdf_knots=None).fit(Sd, yd)
    assert list(model.cv_scores_) == list(ref.cv_scores_)
    assert {k[0] for k in model.cv_scores_} == {"additive", "pairwise", "tensor"}
    for key in ref.cv_scores_:
        assert model.cv_scores_[key] == pytest.approx(ref.cv_scores_[key], rel=1e-9)
    structure, degrees = min(model.cv_scores_, key=model.cv_scores_.get)
    assert structure != "additive" and model.degree_ == degrees
    fixed = BernsteinFusion(base=None, degree=degrees, structure=structure, ecdf_knots=None)
    fixed.fit(Sd, yd)
    assert fixed.components_ == model.components_
    np.testing.assert_allclose(model.coef_, fixed.coef_, atol=1e-6, rtol=0)


def test_default_model_on_dask_equals_in_memory_fit_on_the_same_cells(client, data):
    S, y, w = data
    Sd, yd, wd = _dask(S, y, w)
    for kw in (dict(degree=5, lam=1e-3), dict(degree=2, lam=float("inf"))):
        # the tensor and the additive model are cross-validated: the folds of the dask fit
        ref = BernsteinFusion(**kw, bins=16, cv=HashFolds(5)).fit(S, y, sample_weight=w)
        model = BernsteinFusion(**kw, bins=16, ecdf_knots=None).fit(Sd, yd, sample_weight=wd)
        assert model.n_cells_ == ref.n_cells_ > 0
        np.testing.assert_allclose(model.base_coef_, ref.base_coef_, atol=1e-7)
        np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-6)
        p = model.predict_proba(Sd).compute()
        np.testing.assert_allclose(p, ref.predict_proba(S), rtol=0, atol=1e-7)
        # and close to the fit on the rows themselves
        rows = BernsteinFusion(**kw, bins=None).fit(S, y, sample_weight=w)
        assert np.max(np.abs(p - rows.predict_proba(S))) < 5e-3


def test_default_model_cross_validation_on_dask_equals_in_memory(client, small):
    # the cells' folds come from a hash of each row, not from its position or block; the
    # in-memory fit sees them with HashFolds (an int cv deals them per class instead)
    S, y = small
    Sd, yd = _dask(S, y, chunk=SMALL_CHUNK)
    model = BernsteinFusion(ecdf_knots=None).fit(Sd, yd)
    ref = BernsteinFusion(bins=auto_bins(2), cv=HashFolds(5)).fit(S, y)  # the same cells
    assert model.n_cells_ == ref.n_cells_ > 0
    assert model.lam_ == ref.lam_ and list(model.cv_scores_) == list(ref.cv_scores_)
    for key, value in ref.cv_scores_.items():
        assert model.cv_scores_[key] == pytest.approx(value, rel=1e-9)
    p = model.predict_proba(Sd).compute()
    np.testing.assert_allclose(p, ref.predict_proba(S), rtol=0, atol=1e-4)
    again = BernsteinFusion(ecdf_knots=None).fit(Sd, yd)
    assert again.cv_scores_ == model.cv_scores_


def test_sketched_default_model_on_dask_equals_in_memory(client, small):
    # the sketch's knots are chosen among hashed candidates: the same in memory and on dask
    S, y = small
    Sd, yd = _dask(S, y, chunk=SMALL_CHUNK)
    model = BernsteinFusion(ecdf_knots=300).fit(Sd, yd)
    ref = BernsteinFusion(ecdf_knots=300, bins=auto_bins(2), cv=HashFolds(5)).fit(S, y)
    assert model.ecdf_error_bound_ == ref.ecdf_error_bound_ > 0
    for j in range(2):
        np.testing.assert_array_equal(model.ecdf_.knots_[j], ref.ecdf_.knots_[j])
        np.testing.assert_array_equal(model.ecdf_.values_[j], ref.ecdf_.values_[j])
    assert model.lam_ == ref.lam_
    p = model.predict_proba(Sd).compute()
    np.testing.assert_allclose(p, ref.predict_proba(S), rtol=0, atol=1e-9)


@pytest.mark.parametrize("how", ["auto", "given"])
def test_reversed_column_on_dask_equals_in_memory(client, small, how):
    # A column reversed by increasing="auto" (or given as False): both paths refit the sketch
    # on the reversed scores. Mirroring the sketch of s instead gives other knots than the
    # sketch of 1 - s (the candidates are the values of smallest hash), and on a flat CV
    # curve another penalty.
    S, y = small
    S = np.column_stack([S[:, 0], -S[:, 1]])  # the second score anti-aligned
    Sd, yd = _dask(S, y, chunk=SMALL_CHUNK)
    params = {"ecdf_knots": 300, "increasing": "auto" if how == "auto" else [True, False]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the reversal's warning
        model = BernsteinFusion(**params).fit(Sd, yd)
        ref = BernsteinFusion(bins=auto_bins(2), cv=HashFolds(5), **params).fit(S, y)
    assert list(model.increasing_) == list(ref.increasing_) == [True, False]
    for j in range(2):
        np.testing.assert_array_equal(model.ecdf_.knots_[j], ref.ecdf_.knots_[j])
        np.testing.assert_array_equal(model.ecdf_.values_[j], ref.ecdf_.values_[j])
    assert model.ecdf_error_bound_ == ref.ecdf_error_bound_
    assert model.lam_ == ref.lam_
    p = model.predict_proba(Sd).compute()
    np.testing.assert_allclose(p, ref.predict_proba(S), rtol=0, atol=1e-9)
