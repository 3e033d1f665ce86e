"""The one Newton solver (fusion/bernstein/newton.py) and its loss-object interface."""

import numpy as np
import pytest
from scipy.special import expit

from fusion.bernstein import newton
from fusion.bernstein.binary import logistic
from fusion.bernstein.structure import Layout, Structure


def _design(n, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2))
    Z = np.log(U / (1 - U))
    Z = (Z - Z.mean(0)) / Z.std(0)
    y = (rng.random(n) < expit(0.8 * Z[:, 0] + 1.5 * np.sqrt(U[:, 1]) - 1.0)).astype(float)
    w = rng.uniform(0.5, 2.0, size=n)
    structure = Structure.named("tensor", (3, 3))
    X = np.concatenate([Z, structure.design(U)], axis=1)
    return logistic.Design(X, w, w * y), Layout(2, structure)


class _StatsOnly:
    """A loss object with ``stats`` alone: the solver evaluates its trial points itself."""

    def __init__(self, loss):
        self.loss = loss

    def stats(self, requests, hessian, gradient=True):
        fresh = [(key, np.array(x)) for key, x in requests]  # no linear predictor reused
        return self.loss.stats(fresh, hessian, gradient)


def _solve(loss, designs, layout, lam=1e-3):
    problems = [
        newton.Problem(key, np.zeros(layout.n_coef), lam, d.total) for key, d in designs.items()
    ]
    newton.solve(loss, layout, problems, {}, newton.RIDGE)
    return problems


def test_problems_advancing_together_are_solved_as_alone():
    # the folds of a path share the solver's passes, not their arithmetic
    designs = {k: _design(400 + 100 * k, seed=k)[0] for k in range(3)}
    layout = _design(10, 0)[1]
    together = _solve(logistic.LogisticLoss(designs), designs, layout)
    for k, pb in enumerate(together):
        alone = _solve(logistic.LogisticLoss({k: designs[k]}), {k: designs[k]}, layout)[0]
        np.testing.assert_array_equal(pb.x, alone.x)
        assert pb.n_iter == alone.n_iter


def test_a_loss_without_its_own_trial_points_reaches_the_same_optimum():
    design, layout = _design(800, seed=5)
    designs = {None: design}
    stepped = _solve(logistic.LogisticLoss(designs), designs, layout)[0]
    plain = _solve(_StatsOnly(logistic.LogisticLoss(designs)), designs, layout)[0]
    assert plain.status == stepped.status == "solved"
    np.testing.assert_allclose(plain.x, stepped.x, atol=1e-6)
    assert abs(plain.f - stepped.f) < 1e-10


def test_step_curvature_is_made_convex_only_where_it_is_not():
    # the reduced Hessian of a Newton step: left as it is when its smallest eigenvalue is
    # at least half the damping, else symmetrized with that eigenvalue raised to the
    # damping (OSQP refuses a non-convex step QP: "problem non convex" at C = 1,000)
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    good = A @ A.T + np.eye(6)
    assert newton._convex(good, 1e-3) is good
    Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    bad = Q @ np.diag([-0.5, 1e-6, 1, 2, 3, 4]) @ Q.T
    bad[0, 1] += 1e-9  # not exactly symmetric either
    fixed = newton._convex(bad, 1e-3)
    np.testing.assert_allclose(fixed, fixed.T)
    assert np.linalg.eigvalsh(fixed)[0] == pytest.approx(1e-3, rel=1e-6)
    # the fix shifts every eigenvalue by the same amount: directions are kept
    np.testing.assert_allclose(
        np.linalg.eigvalsh(fixed) - np.linalg.eigvalsh(0.5 * (bad + bad.T)), 0.5 + 1e-3, rtol=1e-6
    )
