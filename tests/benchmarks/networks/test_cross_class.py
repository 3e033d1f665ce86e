"""The cross-class study's pieces (benchmarks/bench_cross_class.py): its likelihood's
gradient, the monotonicity bound it reports, the constrained fit of `--dominant`, and the
drop count it checks them with."""

from __future__ import annotations

import bench_cross_class as study
import numpy as np
from scipy.optimize import approx_fprime
from scipy.special import softmax


def test_the_matrix_objective_has_its_gradient():
    rng = np.random.default_rng(0)
    n, M, C = 40, 2, 4
    eta, Z = rng.normal(size=(n, C)), rng.normal(size=(n, M, C))
    y = rng.integers(0, C, n)
    theta = 0.3 * rng.normal(size=M * C * C)
    f, g = study.objective(theta, eta, Z, y, 0.7)
    numeric = approx_fprime(theta, lambda t: study.objective(t, eta, Z, y, 0.7)[0], 1e-7)
    np.testing.assert_allclose(g, numeric, atol=1e-5)
    # the fit lowers the penalized loss below the start's
    fitted = study.fit_matrix(eta, Z, y, 0.7)
    assert (
        study.objective(fitted, eta, Z, y, 0.7)[0] < study.objective(0 * theta, eta, Z, y, 0.7)[0]
    )


def test_drops_count_a_class_falling_when_its_logit_rises():
    rng = np.random.default_rng(1)
    S = softmax(rng.normal(size=(30, 1, 5)), axis=2)

    def plain(X):  # the network's own softmax: monotone
        return X[:, 0]

    B = np.zeros((5, 5))
    B[1, 0] = 3.0  # class 0's logit feeds class 1's more than its own: not monotone

    def crossed(X):
        L = np.log(X[:, 0])
        return softmax(L + L @ B.T, axis=1)

    assert study.drops(plain, S, probabilities=True) == 0
    assert study.drops(crossed, S, probabilities=True) > 0
    # logits given as they are: raising one is the same check
    logits = np.log(S)
    assert study.drops(lambda X: softmax(X[:, 0], axis=1), logits, probabilities=False) == 0


def test_the_bound_keeps_monotone_what_it_admits():
    # B at the bound for slope c: the member's logits through c z + B z (centred) stay monotone
    rng = np.random.default_rng(2)
    C, c = 5, 0.8
    B = rng.normal(size=(C, C))
    R = B.sum(axis=1)
    rise = B - np.diag(B)[None, :] + (R[None, :] - R[:, None]) / C
    off = ~np.eye(C, dtype=bool)
    B *= c / rise[off].max()  # the largest left side now equals c: at the bound
    S = rng.normal(size=(200, 1, C)) * 3

    def fused(X):
        z = X[:, 0] - X[:, 0].mean(axis=1, keepdims=True)
        return softmax(c * z + z @ B.T, axis=1)

    assert study.drops(fused, S, probabilities=False) == 0
    B *= 3.0  # three times past it: some class falls
    assert study.drops(fused, S, probabilities=False) > 0


def test_the_dominant_stage_meets_its_constraints_and_keeps_monotone_what_it_admits():
    rng = np.random.default_rng(3)
    n, M, C = 300, 2, 4
    Z = rng.normal(size=(n, M, C)) * 2
    Z -= Z.mean(axis=2, keepdims=True)
    eta = 0.5 * Z.sum(axis=1)
    y = np.argmax(eta + 2.0 * Z[:, 0, ::-1] + rng.gumbel(size=eta.shape), axis=1)  # crossed
    theta = study.fit_matrix(eta, Z, y, 0.01, diagonal=True, dominant=True)
    A = study.dominance(M, C, 2 * C)
    assert (A @ theta).min() >= -1e-7
    assert theta[:C].min() >= -1 - 1e-9  # slopes 1 + a >= 0
    free = study.fit_matrix(eta, Z, y, 0.01, diagonal=True)
    assert (A @ free).min() < -0.1  # the labels pull the free fit out of the cone
    # a matrix on the cone's boundary, with nothing from a model's own slope, is monotone
    # on its own; pushed past the boundary it is not
    off = rng.normal(size=(C, C))
    off[np.diag_indices(C)] = 0.0
    # the constraints of t I + O are those of O plus t: t at their smallest's negative
    B = off - np.eye(C) * (study.dominance(1, C, 0) @ off.ravel()).min()
    S = rng.normal(size=(200, 1, C)) * 3

    def fused(X, B=B):
        z = X[:, 0] - X[:, 0].mean(axis=1, keepdims=True)
        return softmax(z @ B.T, axis=1)

    assert abs((study.dominance(1, C, 0) @ B.ravel()).min()) < 1e-12
    assert study.drops(fused, S, probabilities=False) == 0
    B2 = B.copy()
    B2[np.diag_indices(C)] -= 1.0
    assert study.drops(lambda X: fused(X, B2), S, probabilities=False) > 0
