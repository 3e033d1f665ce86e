"""A rough estimate of an MR-MIC fit's running time, for the warning before long fits.

The estimate is a sum of four terms, each a power law in the number ``g`` of QP points
(distinct training points after merging and grouping), with constants measured with one
BLAS thread on a shared 2-core machine under varying load (benchmarks/bench_mrmic.py,
table ``cost``; measurements at high load were about twice those at low load, and the
constants lie in between). It aims at the right order of magnitude, not at seconds:

* dominance edges (the transitive reduction, ``M >= 3``): ``1.6e-10 g^3`` s per QP;
* OSQP's factorization on the dense graph: ``3e-10 g^3`` s per QP;
* OSQP's iterations: :data:`ITERATIONS_PER_SOLVE` per solve, each
  :func:`seconds_per_iteration` = ``max(3e-9 g^2, 1e-10 g m)`` s on the dense graph and
  ``1e-10 g m`` s on the k-NN graph, where ``m`` is the number of dominance edges, taken as
  ``EDGES_PER_POINT[M] * g`` (measured at g = 1000 on correlated scores);
* Delaunay triangulations of the linear rule: ``2e-5`` s per simplex, with
  :data:`SIMPLICES_PER_POINT` simplices per point (for points spread in ``d = M``
  dimensions), at most ``g^ceil(d/2)``.

A fit with ``lam="cv"`` builds one QP and one triangulation per fold and one for the final
fit, and solves ``n_folds * n_candidates + 1`` times.
"""

from __future__ import annotations

import math

from .._progress import SLOW_SECONDS

__all__ = ["estimate_fit_seconds", "seconds_per_iteration", "WARN_SECONDS", "ITERATIONS_PER_SOLVE"]

#: A fit estimated to take longer than this warns first (the package-wide threshold).
WARN_SECONDS = SLOW_SECONDS

#: OSQP iterations assumed per solve: at ``g`` = 300-500, solves took 150-1,500 (tied and
#: binary scores at the top, continuous ones 200-900), about 500 on average.
ITERATIONS_PER_SOLVE = 500

#: Dominance edges per point (transitive reduction) at g = 1000, simulated correlated scores.
EDGES_PER_POINT = {1: 1.0, 2: 5.3, 3: 12.9, 4: 20.9, 5: 28.0, 6: 34.7, 7: 38.0, 8: 40.7}

#: Delaunay simplices per point for points spread in d dimensions (about 2, 6.8, 31, 197 and
#: 1,600 for d = 2..6, growing some ten-fold per further dimension).
SIMPLICES_PER_POINT = {1: 1.0, 2: 2.0, 3: 6.8, 4: 31.0, 5: 197.0, 6: 1600.0}


def _edges(g: int, M: int) -> float:
    return g * EDGES_PER_POINT.get(M, EDGES_PER_POINT[8])


def _simplices(g: int, d: int) -> float:
    per_point = SIMPLICES_PER_POINT.get(d, SIMPLICES_PER_POINT[6] * 10.0 ** (d - 6))
    return min(g * per_point, float(g) ** math.ceil(d / 2))


def seconds_per_iteration(g: int, m: float, graph: str) -> float:
    """Estimated seconds of one OSQP iteration on ``g`` points with ``m`` dominance edges.

    The edge term stands for the fill-in of OSQP's factorization along the dominance edges,
    which dominates on the k-NN graph; the dense graph's factor is at least ``g^2 / 2``.
    """
    seconds = 1e-10 * g * m
    if graph == "dense":
        seconds = max(seconds, 3e-9 * g**2)
    return seconds


def estimate_fit_seconds(
    g: int,
    M: int,
    *,
    graph: str,
    n_qps: int,
    n_solves: int,
    interpolation: str,
) -> float:
    """Estimated seconds of a fit with ``g`` QP points (see the module docstring).

    Parameters
    ----------
    g : int
        QP points of the full training set (the folds' are taken as large).
    M : int
        Number of scores.
    graph : {"dense", "knn"}
    n_qps : int
        QPs built (folds plus the final fit).
    n_solves : int
        QP solves in all.
    interpolation : {"linear", "monotone"}
        The rule applied to held-out rows and at prediction (one triangulation per QP).
    """
    g = max(int(g), 1)
    per_qp = (1.6e-10 * g**3 if M >= 3 else 0.0) + (3e-10 * g**3 if graph == "dense" else 0.0)
    per_solve = ITERATIONS_PER_SOLVE * seconds_per_iteration(g, _edges(g, M), graph)
    seconds = n_qps * per_qp + n_solves * per_solve
    if interpolation == "linear" and M >= 2:
        seconds += n_qps * 2e-5 * _simplices(g, M)
    return seconds
