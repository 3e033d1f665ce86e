"""Every UserWarning a fit raises points at the caller's line (fusion/_warn.py), whichever
path inside the package raised it and however deep."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from scipy.special import softmax

import fusion
from fusion import BernsteinFusion
from fusion._warn import caller_level


def _binary(n=600, seed=0, reverse=False):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * S[:, 0] - S[:, 1]))).astype(int)
    if reverse:
        S[:, 1] = -S[:, 1]
    return S, y


def _multiclass(n=1000, seed=1):
    # one label-smoothed network: no temperature fits it, its monotone correction g does
    rng = np.random.default_rng(seed)
    L = 2.0 * rng.normal(size=(n, 4))
    y = (rng.random(n)[:, None] > np.cumsum(softmax(L, 1), 1)).sum(1).clip(0, 3)
    return 0.5 * softmax(2 * L, 1) + 0.5 / 4, y


CASES = {
    # the reversed-score warning, from the base's direction step (fusion/_validation.py)
    "reversed score, estimator": lambda: BernsteinFusion(lam=np.inf).fit(*_binary(reverse=True)),
    "reversed score, fusion.fit": lambda: fusion.fit(*_binary(reverse=True), lam=np.inf),
    # the grid-edge warning of the binary default model (estimator, deeper in the fit): lam=1
    # clearly beats the overfitting 1e-8 (a flat edge, as [1e-8, 1e-9], no longer warns)
    "binary grid edge": lambda: BernsteinFusion(lam_grid=[1.0, 1e-8]).fit(*_binary()),
    # the grid-edge warning of the class-shared multi-class model
    # (fusion/bernstein/multiclass/shared.py)
    "multi-class grid edge": lambda: fusion.fit(*_multiclass(), lam_grid=[1.0, 1e-3]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_warnings_from_fit_point_at_the_callers_line(case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        CASES[case]()
    user = [w for w in caught if issubclass(w.category, UserWarning)]
    assert user, f"{case}: no UserWarning raised"
    for w in user:
        assert w.filename == __file__, (case, w.filename, str(w.message)[:80])
        assert w.lineno in (line, *_lambda_lines(case)), (case, w.lineno)


def _lambda_lines(case):
    source, start = inspect.getsourcelines(CASES[case])
    return range(start, start + len(source))


def test_caller_level_skips_every_frame_of_the_package():
    assert caller_level() == 1  # called from a test: already outside the package
