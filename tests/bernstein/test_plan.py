"""What a Bernstein fit tries (fusion/bernstein/plan.py): the cells or the rows, the
candidates, the grids."""

import numpy as np
import pytest

from fusion import BernsteinFusion
from fusion.bernstein.plan import logistic_plan, resolve_bins, shared_plan


def test_bins_resolution():
    assert resolve_bins("auto", 1000, 2, dask=False) is None
    assert resolve_bins("auto", 50_000, 2, dask=False) == 32
    assert resolve_bins("auto", 50_000, 5, dask=False) is None
    assert resolve_bins("auto", 10, 5, dask=True) == 8
    assert resolve_bins(12, 10, 2, dask=False) == 12
    with pytest.raises(ValueError, match="not available for dask"):
        resolve_bins(None, 10, 2, dask=True)


def test_the_default_plan_tries_the_tensor_and_the_additive_model_at_two_and_three_scores():
    for M, names in ((1, ["tensor"]), (2, ["tensor", "additive"]), (4, ["additive"])):
        plan = logistic_plan(BernsteinFusion(), 5_000, M)
        assert [c.name for c in plan.candidates] == names
        assert plan.lams[0] == np.inf and plan.searches
    fixed = logistic_plan(BernsteinFusion(lam=np.inf, structure="tensor"), 5_000, 2)
    assert not fixed.searches and not fixed.deals_folds


def test_the_shared_plan_takes_whole_decades_and_one_degree():
    plan = shared_plan(BernsteinFusion(), 1_000, 3, 10)
    assert all(np.isinf(v) or np.log10(v) == round(np.log10(v)) for v in plan.lams)
    assert plan.searches and plan.sample == 1.0
    with pytest.raises(ValueError, match="one degree for every scorer"):
        shared_plan(BernsteinFusion(degree=(2, 3, 2)), 1_000, 3, 10)


def test_the_automatic_degree_gives_no_more_coefficients_than_rows():
    # a 125-coefficient tensor on 40 rows sent the penalty path into ill-posed QPs (13 s of
    # OSQP for 40 rows) and let cross-validation pick a small lam
    for n, M in ((40, 3), (20, 2), (100, 3), (12, 1)):
        for c in logistic_plan(BernsteinFusion(), n, M).candidates:
            assert c.structure.n_coef <= n, (n, M, c.name, c.degrees)
            assert min(c.degrees) >= 1
    kept = np.arange(200) < 30  # rows of positive weight count
    plan = logistic_plan(BernsteinFusion(), 200, 3, kept)
    assert all(c.structure.n_coef <= 30 for c in plan.candidates)
    # from enough rows, the degrees of auto_degree
    assert [c.degrees for c in logistic_plan(BernsteinFusion(), 2_500, 3).candidates] == [
        (4, 4, 4),
        (8, 8, 8),
    ]
    rng = np.random.default_rng(0)
    z = rng.normal(size=40)
    y = (z + rng.logistic(size=40) > 0).astype(int)
    S = np.round(z[:, None] + rng.normal(size=(40, 3)), 1)
    model = BernsteinFusion().fit(S, y)
    assert np.prod(np.add(model.degree_, 1)) <= 40
    p = model.predict_proba(S)[:, 1]
    assert np.all((p > 0) & (p < 1))
