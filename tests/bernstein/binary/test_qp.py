import cvxpy as cp
import numpy as np
import pytest

from fusion._lstsq import LeastSquaresStats, heldout_sse
from fusion._solver import monotone_constraints
from fusion.bernstein.basis import tensor_design
from fusion.bernstein.binary.qp import MonotoneQP, accumulate_gram, project_monotone
from fusion.bernstein.structure import Structure

SETTINGS = dict(eps_abs=1e-9, eps_rel=1e-9, max_iter=200_000)


def _data(n, M, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, M))
    truth = 0.1 + 0.8 * np.prod(U, axis=1) ** 0.7
    y = (rng.random(n) < truth).astype(float)
    w = rng.uniform(0.5, 2.0, size=n)
    return U, y, w


def _cvxpy_reference(U, y, w, degrees):
    """The same QP stated directly on the n x P design, solved by Clarabel."""
    shape = [k + 1 for k in degrees]
    Phi = tensor_design(U, degrees)
    beta = cp.Variable(int(np.prod(shape)))
    B = cp.reshape(beta, shape, order="C") if len(shape) == 2 else None
    cons = [beta >= 0, beta <= 1]
    idx = np.arange(beta.size).reshape(shape)
    for axis, size in enumerate(shape):
        lo = np.take(idx, np.arange(size - 1), axis=axis).ravel()
        hi = np.take(idx, np.arange(1, size), axis=axis).ravel()
        cons.append(beta[hi] >= beta[lo])
    del B
    obj = cp.sum(cp.multiply(w, cp.square(Phi @ beta - y))) / w.sum()
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL
    return beta.value.reshape(shape), prob.value


# Coefficients are compared where the QP is strongly convex (many rows per coefficient);
# with few rows per coefficient the optimum is a flat valley and only the objective is unique.
@pytest.mark.parametrize("M,degrees,n", [(1, (6,), 800), (2, (3, 4), 2000), (3, (1, 2, 2), 3000)])
def test_osqp_solution_equals_cvxpy(M, degrees, n):
    U, y, w = _data(n, M, seed=M)
    stats = accumulate_gram(U, y, w, Structure.named("tensor", degrees))
    beta, status = MonotoneQP([k + 1 for k in degrees], **SETTINGS).solve(stats)
    ref_beta, ref_obj = _cvxpy_reference(U, y, w, degrees)
    obj = heldout_sse(stats, beta) / stats.sw
    assert status == "solved"
    assert obj == pytest.approx(ref_obj, rel=1e-7, abs=1e-9)
    np.testing.assert_allclose(beta, ref_beta, atol=1e-5)


def test_gram_statistics_add_over_chunks_and_match_direct():
    U, y, w = _data(500, 2, seed=7)
    Phi = tensor_design(U, (3, 2))
    tensor = Structure.named("tensor", (3, 2))
    small = accumulate_gram(U, y, w, tensor, chunk_elements=37)
    np.testing.assert_allclose(small.G, Phi.T @ (w[:, None] * Phi))
    np.testing.assert_allclose(small.b, Phi.T @ (w * y))
    halves = accumulate_gram(U[:200], y[:200], w[:200], tensor) + accumulate_gram(
        U[200:], y[200:], w[200:], tensor
    )
    np.testing.assert_allclose(halves.G, small.G)
    assert halves.sw == pytest.approx(w.sum())
    beta = np.random.default_rng(0).random((4, 3))
    direct = np.sum(w * (Phi @ beta.ravel() - y) ** 2)
    assert heldout_sse(small, beta) == pytest.approx(direct)
    assert isinstance(small - halves, LeastSquaresStats)


def test_constraint_matrix_encodes_axis_differences_and_box():
    A, lower, upper = monotone_constraints((3, 2))
    beta = np.arange(6.0)  # increasing along both axes in C order
    r = A @ beta
    assert np.all(r >= lower) and np.all(r[:-6] < np.inf)
    n_diff = 2 * 2 + 3 * 1
    assert A.shape == (n_diff + 6, 6)
    assert np.all(upper[n_diff:] == 1)


def test_projection_makes_any_tensor_exactly_feasible():
    rng = np.random.default_rng(3)
    for shape in [(5,), (4, 6), (3, 3, 3)]:
        beta = project_monotone(rng.normal(0.5, 0.4, size=shape))
        for axis in range(beta.ndim):
            assert np.all(np.diff(beta, axis=axis) >= 0)
        assert beta.min() >= 0 and beta.max() <= 1
    feasible = np.sort(rng.random(7))
    np.testing.assert_array_equal(project_monotone(feasible), feasible)
