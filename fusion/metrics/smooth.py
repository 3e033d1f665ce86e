"""Smooth ECE (Blasiok & Nakkiran 2023): the calibration error of a kernel-smoothed
reliability diagram, with no bins to choose.

For predictions ``f_i`` in ``[0, 1]`` and outcomes ``y_i`` in ``{0, 1}``, the residuals
``r_i = y_i - f_i`` are smoothed with a Gaussian kernel reflected at 0 and 1,

    ``smECE_s = integral over t in [0, 1] of | (1/n) sum_i K_s(t, f_i) r_i | dt``,

``K_s(t, f) = sum_k [phi_s(t - f - 2k) + phi_s(t + f - 2k)]`` (a density on ``[0, 1]`` in
``t`` for every ``f``; ``phi_s`` the normal density of standard deviation ``s``). This is
the mean absolute gap of the smoothed reliability curve, weighted by the smoothed density
of the predictions. ``smECE_s`` does not increase with ``s``; the paper's metric is the
fixed point ``smECE_s* = s*`` (their Definition 9 and Theorem 10: the bandwidth at which the
noise the kernel removes equals the error it reports, which makes the metric a consistent
calibration measure).

Computation: the residual mass is spread linearly onto a uniform grid of ``[0, 1]``
(:data:`POINTS_PER_BANDWIDTH` points per bandwidth, at least :data:`MIN_GRID`), mirrored
onto the circle of period 2, convolved with the periodized Gaussian by FFT (every
reflection, not only the first) and integrated by the trapezoid rule; the fixed point is
bracketed by halving the bandwidth from 1 and found by Brent's method on one grid.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ._docs import doc
from ._labels import binary_pair, class_pair

__all__ = ["smooth_ece", "top_label_smooth_ece"]

#: Grid points per bandwidth (the grid's step is at most ``bandwidth / 40``).
POINTS_PER_BANDWIDTH = 40
#: Fewest grid points on ``[0, 1]``.
MIN_GRID = 1001
#: The smallest bandwidth the fixed point is searched at; below it the smooth ECE is
#: smaller than this, and is reported at this bandwidth.
MIN_BANDWIDTH = 1e-4


class _Grid:
    """The residual mass of ``(f, r)`` on a grid fine enough for bandwidths from
    ``finest`` up; :meth:`smece` gives ``smECE_s`` for any such ``s``."""

    def __init__(self, f: np.ndarray, r: np.ndarray, finest: float) -> None:
        steps = max(MIN_GRID - 1, int(np.ceil(POINTS_PER_BANDWIDTH / finest)))
        self.h = 1.0 / steps
        pos = f * steps
        left = np.minimum(pos.astype(np.int64), steps - 1)
        frac = pos - left
        mass = np.zeros(steps + 1)
        np.add.at(mass, left, (1.0 - frac) * r)
        np.add.at(mass, left + 1, frac * r)
        mass /= f.shape[0]
        # The circle of period 2: x in [0, 1] and its mirror 2 - x; the masses at 0 and 1
        # are their own mirrors and count twice (the kernel's two terms coincide there).
        self.period = 2 * steps
        circle = np.zeros(self.period)
        circle[: steps + 1] = mass
        circle[steps + 1 :] = mass[steps - 1 : 0 : -1]
        circle[0] *= 2.0
        circle[steps] *= 2.0
        self.spectrum = np.fft.rfft(circle)
        self.steps = steps

    def smece(self, s: float) -> float:
        offsets = np.arange(self.period, dtype=float)
        offsets = np.minimum(offsets, self.period - offsets) * self.h  # distance on the circle
        wraps = int(np.ceil(4.0 * s)) + 1
        shifts = 2.0 * np.arange(-wraps, wraps + 1)
        d = offsets[:, None] + shifts[None, :]
        kernel = np.exp(-0.5 * (d / s) ** 2).sum(axis=1) / (s * np.sqrt(2.0 * np.pi))
        smoothed = np.fft.irfft(self.spectrum * np.fft.rfft(kernel), n=self.period)
        g = np.abs(smoothed[: self.steps + 1])
        return float(self.h * (g.sum() - 0.5 * (g[0] + g[-1])))


def _gap(s: float, grid: _Grid) -> float:
    return grid.smece(s) - s


def _smooth_ece(f: np.ndarray, r: np.ndarray, bandwidth: float | None) -> float:
    """``smECE`` of predictions ``f`` with residuals ``r`` at ``bandwidth`` (None: the
    fixed point)."""
    if bandwidth is not None:
        return _Grid(f, r, bandwidth).smece(bandwidth)
    hi = 1.0
    while True:
        lo = hi / 2.0
        if lo < MIN_BANDWIDTH:
            return _Grid(f, r, MIN_BANDWIDTH).smece(MIN_BANDWIDTH)
        grid = _Grid(f, r, lo)
        if grid.smece(lo) > lo:
            # smECE is non-increasing in s, so s - smECE_s changes sign once; twice the
            # previous upper end keeps the bracket valid on this finer grid too.
            s = brentq(_gap, lo, 2.0 * hi, args=(grid,), xtol=1e-10, rtol=1e-10)
            return grid.smece(s)
        hi = lo


def _check_bandwidth(bandwidth) -> float | None:
    if bandwidth is None:
        return None
    try:
        ok = not isinstance(bandwidth, bool) and float(bandwidth) > 0 and np.isfinite(bandwidth)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"bandwidth must be a positive number or None (the fixed point), got {bandwidth!r}."
        )
    return float(bandwidth)


@doc
def smooth_ece(y, p, *, bandwidth: float | None = None, pos_label=None, labels=None) -> float:
    """Smooth ECE of binary predictions (Blasiok & Nakkiran 2023).

    The mean absolute gap between the kernel-smoothed reliability curve and the diagonal,
    weighted by the smoothed density of the predictions, with a Gaussian kernel reflected at
    0 and 1. By default its bandwidth is the paper's fixed point ``s* = smECE_s*``, so
    nothing is tuned: unlike a binned ECE it does not depend on a choice of bins and is
    continuous in the predictions.

    Parameters
    ----------
    {binary_y_p}
    bandwidth : float, optional
        The kernel's standard deviation; None (default) takes the fixed point (searched
        down to ``1e-4``; below that the metric is below ``1e-4`` and is computed there).
    {binary_labels}

    Returns
    -------
    float
        In ``[0, 1]``; 0 when the smoothed residuals vanish everywhere.

    See Also
    --------
    top_label_smooth_ece : the same on the top-label confidence of multi-class predictions.
    binned_ece : the binned counterpart.

    Notes
    -----
    ``smECE_s = int_0^1 |(1/n) sum_i K_s(t, f_i) (y_i - f_i)| dt`` with
    ``K_s(t, f) = sum_k [phi_s(t - f - 2k) + phi_s(t + f - 2k)]``. It is computed on a grid
    of at least 40 points per bandwidth (FFT convolution, every reflection included), within
    about ``1e-5`` of the integral. The reference implementation is the ``relplot`` package
    of the paper's authors (``relplot.smECE``), which takes ``(f, y)`` in this order and
    stops its bisection at a step of ``1e-3``; the two agree to a few ``1e-4``.

    References
    ----------
    J. Blasiok and P. Nakkiran, "Smooth ECE: Principled Reliability Diagrams via Kernel
    Smoothing", ICLR 2024 (arXiv:2309.12236).

    Examples
    --------
    >>> from fusion.metrics import smooth_ece
    >>> # one constant prediction: the smooth ECE is |observed rate - prediction|
    >>> round(smooth_ece([0, 1, 1, 1], [0.5, 0.5, 0.5, 0.5]), 4)
    0.25
    """
    bandwidth = _check_bandwidth(bandwidth)
    y01, p1 = binary_pair(y, p, pos_label=pos_label, labels=labels)
    return _smooth_ece(p1, y01 - p1, bandwidth)


@doc
def top_label_smooth_ece(
    y, p, *, bandwidth: float | None = None, labels=None, pos_label=None
) -> float:
    """Top-label smooth ECE: :func:`smooth_ece` of the confidence ``max_k p_k`` against
    "the top label is right".

    The binning-free counterpart of :func:`top_label_ece`; each row's prediction is the
    class of its largest probability (the first such column on a tie).

    Parameters
    ----------
    {top_label_y_p}
    bandwidth : float, optional
        The kernel's standard deviation; None (default) takes the fixed point of
        :func:`smooth_ece`.
    {top_label_labels}

    Returns
    -------
    float
        In ``[0, 1]``.

    Examples
    --------
    >>> from fusion.metrics import top_label_smooth_ece
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    >>> # four rows: the fixed-point bandwidth is wide, the result that of a single bin,
    >>> # |accuracy 3/4 - mean confidence 0.6|
    >>> round(top_label_smooth_ece(["a", "b", "c", "b"], P), 4)
    0.15
    """
    bandwidth = _check_bandwidth(bandwidth)
    index, P = class_pair(y, p, labels=labels, pos_label=pos_label)
    top = np.argmax(P, axis=1)
    confidence = P[np.arange(P.shape[0]), top]
    correct = (top == index).astype(float)
    return _smooth_ece(confidence, correct - confidence, bandwidth)
