"""Structures (fusion/bernstein/structure.py): structure="additive" / "pairwise", sums of
monotone Bernstein components, in the rank-only model's QP and the estimator."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, ndtr

from fusion import BernsteinFusion
from fusion._lstsq import heldout_sse
from fusion.bernstein.basis import make_components, tensor_design
from fusion.bernstein.binary.qp import (
    StructuredQP,
    accumulate_gram,
    project_structured,
    structure_constraints,
)
from fusion.bernstein.structure import Structure


def _scores(n, M, seed, interaction=0.0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, M)) + 0.6 * rng.normal(size=(n, 1))
    eta = z.sum(1) / np.sqrt(M) + interaction * z[:, 0] * z[:, 1]
    p = 0.05 + 0.9 * expit(1.5 * eta)
    return z, (rng.random(n) < p).astype(int), p


def test_components_and_shapes():
    assert make_components("tensor", 3) == ((0, 1, 2),)
    assert make_components("additive", 3) == ((0,), (1,), (2,))
    assert make_components("pairwise", 3) == ((0, 1), (0, 2), (1, 2))
    assert make_components("pairwise", 2) == ((0, 1),)
    assert Structure.of((2, 3, 4), ((0,), (1, 2))).shapes == ((3,), (4, 5))
    assert Structure.named("pairwise", (1, 2, 3)).name(3) == "pairwise"
    with pytest.raises(ValueError, match="structure"):
        make_components("full", 3)


def test_structured_design_and_evaluation_agree():
    rng = np.random.default_rng(0)
    U = rng.random((300, 4))
    degrees = (2, 3, 1, 2)
    structure = Structure.named("pairwise", degrees)
    Phi = structure.design(U)
    coef = rng.random(Phi.shape[1])
    np.testing.assert_allclose(
        structure.evaluate(coef, U, chunk_elements=64), Phi @ coef, atol=1e-13
    )
    # the first block of columns is the (0, 1) tensor design
    np.testing.assert_allclose(Phi[:, :12], tensor_design(U[:, :2], (2, 3)))
    stats = accumulate_gram(U, U[:, 0], np.ones(300), structure, chunk_elements=50)
    np.testing.assert_allclose(stats.G, Phi.T @ Phi, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    M=st.integers(3, 5),
    degree=st.integers(1, 3),
    structure=st.sampled_from(["additive", "pairwise"]),
    seed=st.integers(0, 1000),
    flip=st.booleans(),
)
def test_fit_is_monotone_and_bounded_on_the_whole_cube(M, degree, structure, seed, flip):
    S, y, _ = _scores(600, M, seed)
    if flip:  # labels decreasing in the scores push every constraint to bind
        y = 1 - y
    # the scores as given: increasing="auto" would reverse them, and nothing would bind
    model = BernsteinFusion(base=None, degree=degree, structure=structure, increasing=True)
    model.fit(S, y)
    rng = np.random.default_rng(seed)
    U = rng.random((400, M))
    corners = np.array([[(c >> m) & 1 for m in range(M)] for c in range(2**M)], dtype=float)
    f = model.calibrating_function(np.vstack([U, corners]))
    assert f.min() >= 0 and f.max() <= 1
    # the extremes are the 0- and 1-corners, and equal the corner coefficient sums
    parts = Structure.of(model.degree_, model.components_).split(model.coef_)
    f0 = model._calibrate(np.zeros((1, M)))[0]
    f1 = model._calibrate(np.ones((1, M)))[0]
    assert f0 == pytest.approx(sum(p.flat[0] for p in parts), abs=1e-12)
    assert f1 == pytest.approx(sum(p.flat[-1] for p in parts), abs=1e-12)
    assert f0 >= -1e-12 and f1 <= 1 + 1e-12
    for m in range(M):
        V = U.copy()
        V[:, m] = np.minimum(1.0, V[:, m] + rng.random(400) * 0.3)
        assert np.all(model.calibrating_function(V) >= model.calibrating_function(U) - 1e-12)


def test_structured_qp_equals_cvxpy():
    S, y, _ = _scores(3000, 3, seed=1, interaction=0.3)
    U = (np.argsort(np.argsort(S, axis=0), axis=0) + 0.5) / S.shape[0]
    w = np.random.default_rng(2).uniform(0.5, 2, size=y.shape[0])
    structure = Structure.named("pairwise", (2, 3, 2))
    shapes = structure.shapes
    stats = accumulate_gram(U, y.astype(float), w, structure)
    x, status = StructuredQP(structure, eps_abs=1e-9, eps_rel=1e-9, max_iter=200_000).solve(stats)
    A, lower, upper = structure_constraints(shapes)
    r = A @ x
    assert status == "solved" and np.all(r >= lower - 1e-12) and np.all(r <= upper + 1e-12)
    # reference: the same QP on the n x P design with each constraint stated directly
    Phi = structure.design(U)
    beta = cp.Variable(Phi.shape[1])
    cons, off, first, last = [], 0, [], []
    for shape in shapes:
        idx = off + np.arange(int(np.prod(shape))).reshape(shape)
        for a, size in enumerate(shape):
            cons.append(
                beta[np.take(idx, np.arange(1, size), axis=a).ravel()]
                >= beta[np.take(idx, np.arange(size - 1), axis=a).ravel()]
            )
        first.append(int(idx.flat[0]))
        last.append(int(idx.flat[-1]))
        off += idx.size
    cons += [beta[first[0]] >= 0, cp.sum(beta[last]) <= 1]
    cons += [beta[f] == 0 for f in first[1:]]
    obj = cp.sum(cp.multiply(w, cp.square(Phi @ beta - y))) / w.sum()
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    assert heldout_sse(stats, x) / stats.sw == pytest.approx(prob.value, rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(Phi @ x, Phi @ beta.value, atol=1e-3)


def test_projection_makes_any_vector_feasible():
    rng = np.random.default_rng(4)
    structure = Structure.of((2, 3, 1), ((0, 1), (0, 2), (1, 2)))
    A, lower, upper = structure_constraints(structure.shapes)
    for scale in (0.1, 1.0, 5.0):
        x = project_structured(rng.normal(0.2, scale, size=A.shape[1]), structure)
        r = A @ x
        assert np.all(r >= lower - 1e-12) and np.all(r <= upper + 1e-12)


def test_pairwise_with_two_scores_is_the_tensor_and_additive_fits_additive_truth():
    S, y, _ = _scores(4000, 2, seed=5)
    a = BernsteinFusion(degree=3, lam=1e-2, structure="pairwise").fit(S, y)
    b = BernsteinFusion(degree=3, lam=1e-2, structure="tensor").fit(S, y)
    assert a.coef_.shape == (4, 4) and a.components_ == ((0, 1),)
    np.testing.assert_allclose(a.coef_, b.coef_)
    # an additive truth: both structures contain it
    rng = np.random.default_rng(6)
    S = rng.normal(size=(30_000, 5)) + 0.6 * rng.normal(size=(30_000, 1))
    p = 0.1 + 0.8 * ndtr(S).mean(1)
    y = (rng.random(S.shape[0]) < p).astype(int)
    add = BernsteinFusion(base=None, degree=4, structure="additive").fit(S, y)
    pair = BernsteinFusion(base=None, degree=3, structure="pairwise").fit(S, y)
    assert add.coef_.shape == (25,) and pair.coef_.shape == (160,)
    for model in (add, pair):
        err = np.sqrt(np.mean((model.predict_proba(S)[:, 1] - p) ** 2))
        assert err < 0.03


def test_structure_with_cv_and_size_hint():
    S, y, _ = _scores(3000, 4, seed=7)
    model = BernsteinFusion(
        base=None, structure="pairwise", degree_grid=[1, 2, 3], random_state=0
    ).fit(S, y)
    assert list(model.cv_scores_) == [(1,) * 4, (2,) * 4, (3,) * 4]
    with pytest.raises(ValueError, match="structure='additive'"):
        BernsteinFusion(base=None, degree=6, structure="tensor", max_coefficients=1000).fit(S, y)
