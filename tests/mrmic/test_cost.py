"""Tests of fusion/mrmic/cost.py: the running-time estimate behind the long-fit warning."""

import pytest

from fusion.mrmic import DEFAULT_MAX_POINTS
from fusion.mrmic.cost import WARN_SECONDS, estimate_fit_seconds


def default_fit(g, M, graph="dense"):
    rule = "linear" if M <= 4 else "monotone"
    return estimate_fit_seconds(g, M, graph=graph, n_qps=6, n_solves=26, interpolation=rule)


@pytest.mark.parametrize("M", range(1, 9))
def test_default_max_points_keeps_default_fits_under_the_warning(M):
    assert default_fit(DEFAULT_MAX_POINTS, M) < WARN_SECONDS
    assert default_fit(4 * DEFAULT_MAX_POINTS, M) > WARN_SECONDS  # None would warn here


def test_estimate_grows_with_size_and_work():
    sizes = [default_fit(g, 2) for g in (100, 300, 1000, 3000)]
    assert sizes == sorted(sizes)
    one = estimate_fit_seconds(800, 3, graph="dense", n_qps=1, n_solves=1, interpolation="linear")
    assert default_fit(800, 3) > 10 * one
    knn = default_fit(1000, 2, graph="knn")
    assert knn < default_fit(1000, 2)


def test_linear_rule_in_high_dimension_is_costed():
    args = dict(graph="dense", n_qps=6, n_solves=26)
    linear = estimate_fit_seconds(500, 7, interpolation="linear", **args)
    monotone = estimate_fit_seconds(500, 7, interpolation="monotone", **args)
    assert linear > WARN_SECONDS > monotone
