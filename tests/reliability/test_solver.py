"""Solver failures surface through the public API as ``fusion.SolverError`` or a warning.

Documented behaviour (fusion/_base.py, ``QPSolver``): OSQP status "solved" is used silently;
"solved inaccurate" is used after projection onto the feasible set with a ``SolverWarning``;
every other status ("maximum iterations reached", "primal infeasible", ...) raises
``SolverError`` carrying ``.status`` and ``.solver``. The thresholds below were observed with
osqp 1.x on this data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import fusion
from fusion import SolverError, SolverWarning

from ._methods import METHOD_NAMES, make, scores


def test_solver_error_is_a_runtime_error_with_status():
    err = SolverError("msg", status="maximum iterations reached", solver="osqp")
    assert isinstance(err, RuntimeError)
    assert (err.status, err.solver, str(err)) == ("maximum iterations reached", "osqp", "msg")


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("degree", [3, "cv"])
def test_bernstein_iteration_limit_raises(degree):
    # One OSQP iteration cannot reach even the inaccurate tolerances: an error, not a model
    # (the rank-only model's single QP; the default model's Newton steps are next).
    S, y = scores(200)
    est = fusion.BernsteinFusion(base=None, degree=degree, degree_grid=(1, 2), cv=3, max_iter=1)
    with pytest.raises(SolverError, match=r"status 'maximum iterations reached' after 1 it") as ei:
        est.fit(S, y)
    assert ei.value.status == "maximum iterations reached"
    assert ei.value.solver == "osqp"
    with pytest.raises(NotFittedError):
        est.predict_proba(S)


@pytest.mark.filterwarnings("error")
def test_default_model_iteration_limit_warns_and_stays_monotone():
    # Newton steps whose QP stopped at the iteration limit are projected onto the
    # constraints and line-searched: a feasible model, with a SolverWarning naming max_iter.
    S, y = scores(200)
    est = fusion.BernsteinFusion(degree=3, lam=1e-3, structure="tensor", max_iter=1)
    with pytest.warns(SolverWarning, match=r"inexact steps.*max_iter=1"):
        est.fit(S, y)
    assert est.solver_status_ == "newton: inexact steps"
    assert np.all(est.base_coef_ >= 0)
    for axis in range(est.coef_.ndim):
        assert np.all(np.diff(est.coef_, axis=axis) >= 0)
    G = np.linspace(-4, 4, 60)
    P = est.predict_proba(np.column_stack([np.repeat(G, 60), np.tile(G, 60)]))[:, 1]
    P = P.reshape(60, 60)
    assert np.all(np.diff(P, axis=0) >= 0) and np.all(np.diff(P, axis=1) >= 0)


def test_failed_refit_keeps_the_previous_model():
    S, y = scores(200)
    est = fusion.BernsteinFusion(base=None, degree=3).fit(S, y)
    before = est.predict_proba(S)
    est.set_params(max_iter=1)
    with pytest.raises(SolverError):
        est.fit(S[::-1] * 2, y[::-1])
    np.testing.assert_array_equal(est.predict_proba(S), before)


def test_bernstein_inaccurate_solution_warns_and_stays_feasible():
    # Loose tolerances and a short iteration budget: OSQP stops at "solved inaccurate".
    S, y = scores(200)
    est = fusion.BernsteinFusion(base=None, degree=3, max_iter=10, eps_abs=1e-3, eps_rel=1e-3)
    with pytest.warns(SolverWarning, match=r"solved inaccurate.*Raise max_iter"):
        est.fit(S, y)
    assert est.solver_status_ == "solved inaccurate"
    # The projection makes the coefficients exactly feasible whatever the solver returned.
    beta = est.coef_
    assert np.all(beta >= 0) and np.all(beta <= 1)
    for axis in range(beta.ndim):
        assert np.all(np.diff(beta, axis=axis) >= 0)
    p = est.predict_proba(S)
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_iteration_limit_is_never_silent(name):
    # Every method with an iteration limit: max_iter=1 must raise SolverError (with a status)
    # or warn; it must never hand back a model as if nothing happened.
    est = make(name)
    if "max_iter" not in est.get_params():
        pytest.skip(f"{name} has no max_iter parameter")
    S, y = scores(200)
    est.set_params(max_iter=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(S, y)
        except SolverError as err:
            assert err.status and err.solver
            return
    assert any(issubclass(w.category, (SolverWarning, UserWarning)) for w in caught), (
        f"{name} fitted with max_iter=1 without an error or a warning"
    )
    p = est.predict_proba(S)
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_n_iter_reports_the_final_solve(name):
    # scikit-learn's convention for estimators with max_iter: n_iter_ >= 1 iterations run.
    est = make(name)
    if "max_iter" not in est.get_params():
        pytest.skip(f"{name} has no max_iter parameter")
    S, y = scores(120)
    est.fit(S, y)
    assert isinstance(est.n_iter_, int) and 1 <= est.n_iter_ <= est.max_iter


def test_qp_solver_records_iterations_of_a_failed_solve():
    import scipy.sparse as sp

    from fusion._solver import QPSolver

    qp = QPSolver(sp.eye(2), [0.0, 0.0], [1.0, 1.0], problem="test QP", max_iter=1)
    assert qp.last_iterations == 0
    with pytest.raises(SolverError):
        qp.solve(sp.triu(sp.eye(2), format="csc"), np.array([-5.0, 3.0]))
    assert qp.last_iterations == 1
