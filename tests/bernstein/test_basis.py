import numpy as np
import pytest
from scipy.stats import binom

from fusion.bernstein.basis import bernstein_basis, evaluate, tensor_design


@pytest.mark.parametrize("K", [0, 1, 4, 12])
def test_basis_matches_binomial_pmf_and_partitions_unity(K):
    u = np.linspace(0, 1, 41)
    B = bernstein_basis(u, K)
    expected = binom.pmf(np.arange(K + 1)[None, :], K, u[:, None])
    np.testing.assert_allclose(B, expected, atol=1e-14)
    np.testing.assert_allclose(B.sum(axis=1), 1.0)


def test_tensor_design_is_rowwise_kronecker_in_c_order():
    rng = np.random.default_rng(0)
    U = rng.random((7, 3))
    Phi = tensor_design(U, (2, 1, 3))
    for i in range(7):
        kron = np.kron(
            np.kron(bernstein_basis(U[i : i + 1, 0], 2)[0], bernstein_basis(U[i : i + 1, 1], 1)[0]),
            bernstein_basis(U[i : i + 1, 2], 3)[0],
        )
        np.testing.assert_allclose(Phi[i], kron)


@pytest.mark.parametrize("degrees", [(3,), (2, 5), (1, 2, 3)])
def test_chunked_evaluation_equals_design_product(degrees):
    rng = np.random.default_rng(1)
    U = rng.random((1000, len(degrees)))
    coef = rng.random([k + 1 for k in degrees])
    expected = tensor_design(U, degrees) @ coef.ravel()
    np.testing.assert_allclose(evaluate(coef, U, chunk_elements=50), expected, atol=1e-13)


def test_extreme_points_do_not_underflow_to_subnormals():
    u = np.array([1e-12, 0.5, 1 - 1e-12])
    B = bernstein_basis(u, 30)
    assert np.all((B == 0) | (B >= 1e-150))
