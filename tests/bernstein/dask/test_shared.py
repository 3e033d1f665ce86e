"""The class-shared multi-class model on dask arrays (fusion/bernstein/dask/shared.py): the
in-memory result from chunks of rows on a two-process LocalCluster."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from fusion import BernsteinFusion

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, C = 1_500, 12
    L = 1.5 * rng.normal(size=(n + 500, C))
    y = (rng.random(n + 500)[:, None] > np.cumsum(softmax(L, 1), 1)).sum(1).clip(0, C - 1)
    S = np.stack(
        [softmax((L + s * rng.normal(size=L.shape)) / t, 1) for s, t in ((0.5, 0.6), (1.0, 1.4))],
        axis=1,
    ).astype(np.float32)
    w = rng.integers(0, 4, n).astype(float)  # zero weights too
    return S[:n], y[:n], w, S[n:]


def test_dask_fit_equals_the_in_memory_fit(client, data):
    S, y, w, St = data
    ref = BernsteinFusion().fit(S, y, sample_weight=w)  # multi-class: the folds of dask
    chunks = (300, 500, 700)  # uneven chunks of rows
    model = BernsteinFusion().fit(
        da.from_array(S, chunks=(chunks, 2, 12)),
        da.from_array(y, chunks=(chunks,)),
        sample_weight=da.from_array(w, chunks=(chunks,)),
    )
    assert model.multiclass_ == "shared" and model.lam_ == ref.lam_
    np.testing.assert_allclose(model.predict_proba(St), ref.predict_proba(St), atol=1e-6, rtol=0)
    np.testing.assert_allclose(model.base_coef_, ref.base_coef_, atol=1e-6)
    lazy = model.predict_proba(da.from_array(St, chunks=(200, 2, 12)))
    assert isinstance(lazy, da.Array) and lazy.shape == (500, 12)
    np.testing.assert_allclose(lazy.compute(), model.predict_proba(St), atol=1e-15, rtol=0)


def test_a_list_of_dask_arrays_and_unseen_classes(client, data):
    S, y, _, St = data
    keep = y != 3
    ref = BernsteinFusion().fit(S[keep], y[keep], classes=np.arange(12))
    parts = [da.from_array(S[keep, m], chunks=(500, 12)) for m in range(2)]
    model = BernsteinFusion().fit(parts, da.from_array(y[keep], chunks=500), classes=range(12))
    np.testing.assert_array_equal(model.classes_, np.arange(12))
    np.testing.assert_allclose(model.predict_proba(St), ref.predict_proba(St), atol=1e-6, rtol=0)


def test_one_network_as_a_two_dimensional_dask_array_and_predicted_labels(client, data):
    S, y, _, St = data
    net, test = np.log(S[:, 0]), np.log(St[:, 0])  # one network's (n, C) log-probabilities
    ref = BernsteinFusion().fit(net, y)
    model = BernsteinFusion().fit(da.from_array(net, chunks=(500, 12)), da.from_array(y, 500))
    assert (model.n_features_in_, model.n_classes_) == (1, 12)
    np.testing.assert_allclose(model.predict_proba(test), ref.predict_proba(test), atol=1e-6)
    lazy = da.from_array(test, chunks=(200, 12))
    np.testing.assert_allclose(model.predict_proba(lazy).compute(), model.predict_proba(test),
                               atol=1e-15, rtol=0)  # fmt: skip
    # labels of a multi-class model from dask input: the class of the largest probability
    for X in (lazy, da.from_array(test[:, None, :], chunks=(200, 1, 12))):
        labels = model.predict(X)
        assert isinstance(labels, da.Array)
        np.testing.assert_array_equal(labels.compute(), model.predict(test))
    named = BernsteinFusion().fit(da.from_array(net, chunks=(500, 12)), y, classes=range(12))
    np.testing.assert_allclose(named.predict_proba(test), ref.predict_proba(test), atol=1e-6)


def test_a_reversed_network_is_found_and_negated_as_in_memory(client, data):
    S, y, _, St = data
    flipped = S.copy()
    flipped[:, 1] = -np.log(S[:, 1])  # the second network's negative log-probabilities
    test = St.copy()
    test[:, 1] = -np.log(St[:, 1])
    with pytest.warns(UserWarning, match=r"network\(s\) 1"):
        ref = BernsteinFusion().fit(flipped, y)
    with pytest.warns(UserWarning, match=r"network\(s\) 1"):
        model = BernsteinFusion().fit(da.from_array(flipped, chunks=(500, 2, 12)),
                                      da.from_array(y, chunks=500))  # fmt: skip
    np.testing.assert_array_equal(model.increasing_, [True, False])
    np.testing.assert_allclose(model.predict_proba(test), ref.predict_proba(test), atol=1e-6)


def test_dask_input_errors_are_clear(client, data):
    S, y, _, _ = data
    Sd, yd = da.from_array(S, chunks=(500, 2, 12)), da.from_array(y, chunks=500)
    with pytest.raises(ValueError, match="pass an int cv"):
        BernsteinFusion(cv=[(np.arange(10), np.arange(10, 20))]).fit(Sd, yd)
    with pytest.raises(ValueError, match="class-shared model only"):
        BernsteinFusion(multiclass="per-class").fit(Sd, yd)
    bad = S.copy()
    bad[700, 1, 4] = np.nan
    with pytest.raises(ValueError, match=r"S\[200, 1, 4\] of block 1 is nan"):
        BernsteinFusion().fit(da.from_array(bad, chunks=(500, 2, 12)), yd)
