"""fusion/_solver.py: constraint builders and the BLAS thread limit."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from fusion._solver import (
    difference_constraints,
    monotone_constraints,
    one_blas_thread,
    tensor_axis_pairs,
)


def _blas_threads() -> dict[str, int]:
    return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_difference_constraints_hold_exactly_for_monotone_vectors():
    hi, lo = np.array([1, 2, 3]), np.array([0, 1, 2])
    A, lower, upper = difference_constraints(hi, lo, 4, box=(0.0, 1.0))
    x = np.array([0.1, 0.2, 0.2, 0.9])
    Ax = A @ x
    assert np.all(Ax >= lower) and np.all(Ax <= upper)
    bad = np.array([0.3, 0.2, 0.2, 0.9])  # decreases between 0 and 1
    assert np.any(A @ bad < lower)
    assert A.shape == (3 + 4, 4)


def test_tensor_axis_pairs_compare_each_entry_with_its_predecessor_on_every_axis():
    shape = (3, 4, 2)
    hi, lo = tensor_axis_pairs(shape)
    assert hi.shape[0] == 2 * 4 * 2 + 3 * 3 * 2 + 3 * 4 * 1
    coords_hi = np.array(np.unravel_index(hi, shape)).T
    coords_lo = np.array(np.unravel_index(lo, shape)).T
    diff = coords_hi - coords_lo
    # every pair differs by +1 along exactly one axis
    assert np.all(np.sort(diff, axis=1) == np.array([0, 0, 1]))


def test_monotone_constraints_accept_a_monotone_tensor_and_reject_others():
    shape = (3, 3)
    A, lower, upper = monotone_constraints(shape)
    good = np.add.outer(np.arange(3), np.arange(3)) / 4.0
    assert np.all(A @ good.ravel() >= lower - 1e-15) and np.all(A @ good.ravel() <= upper)
    bad = good.copy()
    bad[1, 1] = 0.0
    assert np.any(A @ bad.ravel() < lower)
    A2, lo2, up2 = monotone_constraints(shape, None)  # unbounded coefficients
    assert A2.shape[0] == A.shape[0] - 9 and np.all(np.isinf(up2))


def test_one_blas_thread_limits_and_restores():
    before = _blas_threads()
    with one_blas_thread():
        assert all(n == 1 for n in _blas_threads().values())
        with one_blas_thread():  # nested
            assert all(n == 1 for n in _blas_threads().values())
        assert all(n == 1 for n in _blas_threads().values())
    assert _blas_threads() == before


def test_one_blas_thread_restores_an_outer_limit_set_by_the_caller():
    before = _blas_threads()
    with threadpool_limits(limits=2, user_api="blas"):
        inside = _blas_threads()
        with one_blas_thread():
            pass
        assert _blas_threads() == inside
    assert _blas_threads() == before


def test_one_blas_thread_in_concurrent_threads_restores_the_original_limit():
    # Limits lowered and raised from different live threads do not restore reliably with
    # OpenBLAS, and interleaved independent limiters would leave one thread: blocks in
    # worker threads, concurrent with one in the main thread, leave the limit as it was.
    before = _blas_threads()
    entered = threading.Barrier(5)
    leave = threading.Barrier(5)
    errors = []

    def work():
        try:
            with one_blas_thread():
                entered.wait(timeout=10)
                leave.wait(timeout=10)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    with one_blas_thread():
        entered.wait(timeout=10)
        assert all(n == 1 for n in _blas_threads().values())
        leave.wait(timeout=10)
    for t in threads:
        t.join()
    assert not errors
    assert _blas_threads() == before


def test_fits_in_a_thread_pool_leave_the_limit_as_they_found_it():
    from concurrent.futures import ThreadPoolExecutor

    import fusion

    rng = np.random.default_rng(1)
    S = rng.normal(size=(300, 2))
    y = (S.sum(1) + rng.normal(size=300) > 0).astype(int)
    before = _blas_threads()
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda d: fusion.BernsteinFusion(degree=d).fit(S, y), [2, 3, 4, 5]))
    assert _blas_threads() == before


def test_fits_and_predictions_leave_the_thread_limit_as_they_found_it():
    import fusion

    rng = np.random.default_rng(0)
    S = rng.normal(size=(300, 2))
    y = (S.sum(1) + rng.normal(size=300) > 0).astype(int)
    before = _blas_threads()
    for name in sorted(fusion.METHODS):
        params = {"bernstein": {"degree": 3}, "mrmic": {"lam": 1e-3}}.get(name, {})
        if name == "rpr":
            params = {"degree": 4, "lam": np.inf}
        model = fusion.fit(S, y, method=name, **params)
        model.predict_proba(S)
        after = _blas_threads()  # a method may load another BLAS (cvxpy's solvers)
        assert {k: after[k] for k in before} == before, name


@pytest.mark.parametrize("box", [(0.0, 1.0), None])
def test_monotone_constraints_are_cached_read_only_objects(box):
    assert monotone_constraints((2, 3), box) is monotone_constraints((2, 3), box)


@pytest.mark.parametrize("multiclass", [False, True])
def test_every_fit_runs_its_dense_algebra_on_one_blas_thread_and_restores_the_caller(
    multiclass, monkeypatch
):
    import fusion
    from fusion.bernstein import newton
    from fusion.bernstein.binary import logistic
    from fusion.bernstein.multiclass import multinomial, shared

    seen = []
    solve = newton.solve

    def spy(*args, **kwargs):
        seen.append(set(_blas_threads().values()))
        return solve(*args, **kwargs)

    for module in (multinomial, shared) if multiclass else (logistic,):
        monkeypatch.setattr(module, "solve", spy)
    rng = np.random.default_rng(0)
    S = rng.random((300, 2, 3)) if multiclass else rng.normal(size=(300, 2))
    y = rng.integers(0, 3 if multiclass else 2, 300)
    with threadpool_limits(limits=2, user_api="blas"):
        caller = _blas_threads()
        fusion.fit(S if multiclass else S, y, lam=1e-3)
        assert _blas_threads() == caller
    assert seen and all(s == {1} for s in seen)
