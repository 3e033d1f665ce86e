"""MR-MIC restores the BLAS thread limit (fusion._solver.one_blas_thread) after every call."""

import threading
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from fusion import MRMICFusion
from fusion._solver import one_blas_thread


def blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture(scope="module")
def model():
    # 40 rows, not 150: a prediction makes one tiny LAPACK call per simplex of the fitted
    # points, and outside the main thread (test_overlapping_contexts_...) OpenBLAS at two
    # threads spun for seconds of CPU over the 150 rows' simplices on a loaded machine
    rng = np.random.default_rng(0)
    S = rng.normal(size=(40, 2))
    y = (S.sum(axis=1) + rng.normal(size=40) > 0).astype(int)
    return MRMICFusion(lam=1e-3).fit(S, y), S


def test_limit_is_one_inside_and_restored_after():
    before = blas_threads()
    with one_blas_thread():
        assert set(blas_threads()) <= {1}
        with one_blas_thread():  # nested in one thread
            assert set(blas_threads()) <= {1}
        assert set(blas_threads()) <= {1}
    assert blas_threads() == before


def test_predict_and_fit_restore_the_limit_inside_an_outer_context(model):
    est, S = model
    outside = blas_threads()
    with threadpool_limits(limits=2, user_api="blas"):
        inside = blas_threads()
        est.predict_proba(S)
        assert blas_threads() == inside
        MRMICFusion(lam=1e-3).fit(S, (S[:, 0] > 0).astype(int))
        assert blas_threads() == inside
    assert blas_threads() == outside


def test_overlapping_contexts_in_threads_restore_the_limit(model):
    # With OpenBLAS's process-wide limit, limit contexts overlapping in several threads used
    # to restore out of order and leave the process at one thread (threadpoolctl's limiter
    # shared by threads: A saves 2, B saves 1, A restores 2, B restores 1).
    est, S = model
    with threadpool_limits(limits=2, user_api="blas"):  # whatever the session's limit is
        _overlapping_contexts(est, S)


def _overlapping_contexts(est, S):
    before = blas_threads()
    if set(before) <= {1}:
        pytest.skip("BLAS runs one thread already; a lost restore would not show")

    def hold():
        for _ in range(50):
            with one_blas_thread():
                time.sleep(0.0005)  # keep the context open while others try to enter

    def predict():
        for _ in range(3):
            est.predict_proba(S)

    # one predicting thread among the holding ones: two predicting at once with BLAS at two
    # threads made OpenBLAS spin for up to 16 s of CPU (its own contention, not the limit's)
    threads = [threading.Thread(target=f) for f in (hold, hold, hold, predict)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert blas_threads() == before
