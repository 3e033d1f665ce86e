"""A BLAS thread limit that is always undone, also when several threads use it.

scipy computes the barycentric transforms of a Delaunay triangulation with one tiny LAPACK
call per simplex; multithreaded OpenBLAS busy-waits on each, which made linear
interpolation 20-100 times slower on a loaded 2-core machine (benchmarks/RESULTS.md), so that
step runs with one BLAS thread.

OpenBLAS built with its pthreads layer has one process-wide limit. Two overlapping limit
contexts in different threads then restore out of order: thread A saves 2 and sets 1, thread
B saves 1 and sets 1, A restores 2, B restores 1, and the process is left at one thread for
good (reproduced with four threads and threadpoolctl's ``limit``). Here the limited sections
are serialized by a lock, so each restores exactly what it found; a fresh controller is
built each time, so libraries loaded after the first call are limited and restored too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["one_blas_thread"]

#: Re-entrant: a thread may nest the context (each level restores what it found).
_LOCK = threading.RLock()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with BLAS limited to one thread; restore the previous limits after.

    Blocks of different threads run one at a time, so keep the block short.
    """
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    with _LOCK, threadpool_limits(limits=1, user_api="blas"):
        yield
