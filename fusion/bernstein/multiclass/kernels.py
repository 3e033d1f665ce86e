"""Compiled loops over the (row, class) pairs of the class-shared model: every row's shifted
linear predictor, and from its exponentials the log-loss and the sums the gradient is made
of; the scorers' weighted histograms and the pairs' bins (:mod:`.pairs`).

Why compiled: every Newton step of every fold is one pass over ``n x C`` pairs, and NumPy
took about thirty array passes for one (a gather and a multiply-add per scorer, the softmax,
a weighted histogram per scorer): about 100 ns per pair at five scorers. Here a pass reads
every pair twice, and the exponentials between the two loops are NumPy's (vectorized, four
times faster than a compiled scalar loop's). Numba is imported when a class-shared fit first
needs it; its compiled code is cached on disk.

The arithmetic is that of :mod:`.multinomial`: for row ``i``, ``eta_k = sum_m (c_m z_mk +
G_m[bin_mk]) + b_k``, logits below the row's largest by more than :data:`SOFTMAX_FLOOR`
raised to it, ``loss_i = log sum_k exp(eta_k - top) - (eta_y - top)``. Every loop takes the
block's whole arrays and a range of its rows (a slice of the rows would be a strided view,
which the compiled loops index at half the speed).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "SOFTMAX_FLOOR",
    "shifted_logits",
    "gradient_sums",
    "weighted_histogram",
    "bin_pairs",
]

#: Logits below their row's largest by more than this are raised to it before the softmax:
#: their probabilities (below 1e-130) change by nothing a log-loss or a gradient can show,
#: and no product of two of them underflows to a subnormal number (which the CPU handles
#: some hundred times slower: blocks of rows with a zero probability took 60 times longer).
SOFTMAX_FLOOR = 300.0


@njit(cache=True, nogil=True)
def shifted_logits(Z, B, a, b, index, c, G, offsets, bias, E, picked):  # pragma: no cover
    """Rows ``a:b`` of the block (``Z``, ``B`` of shape (M, R, C)): ``E[i - a, k] = max(eta_ik
    - top_i, -SOFTMAX_FLOOR)`` and ``picked[i - a] = eta_i,y_i - top_i``, ``top_i`` the
    row's largest ``eta``; ``G`` every scorer's table end to end, scorer ``m``'s from
    ``offsets[m]``; ``bias`` empty without class biases."""
    M, C = Z.shape[0], Z.shape[2]
    c0, o0 = c[0], offsets[0]
    for i in range(a, b):
        e = E[i - a]
        for k in range(C):
            e[k] = c0 * Z[0, i, k]
            e[k] += G[o0 + B[0, i, k]]
        for m in range(1, M):
            cm, om = c[m], offsets[m]
            for k in range(C):
                e[k] += cm * Z[m, i, k]
                e[k] += G[om + B[m, i, k]]
        if bias.shape[0]:
            for k in range(C):
                e[k] += bias[k]
        top = e[0]
        for k in range(1, C):
            if e[k] > top:
                top = e[k]
        picked[i - a] = e[index[i]] - top
        for k in range(C):
            e[k] = max(e[k] - top, -SOFTMAX_FLOOR)


@njit(cache=True, nogil=True)
def gradient_sums(Z, B, a, b, index, w, offsets, E, zsum, bins, classes, diag):  # pragma: no cover
    """From ``E``, the exponentials of :func:`shifted_logits` of rows ``a:b``, every row's
    ``log sum_k E_ik`` (returned); ``E`` is overwritten by the weighted probabilities ``p_ik
    = w_i E_ik / sum_k E_ik`` and the gradient's sums are added to the accumulators:
    ``zsum[m] += sum_ik p_ik z_mik - sum_i w_i z_m,i,y_i``, the same with the pairs' bins in
    place of ``z`` in ``bins`` (scorer ``m``'s from ``offsets[m]``); with class biases
    (``classes`` not empty) ``classes[k] += sum_i p_ik - sum_{i: y_i = k} w_i`` and
    ``diag[k] += sum_i p_ik (1 - p_ik / w_i)`` (the biases' curvature diagonal). Rows of zero
    weight add nothing (their ``p`` is 0)."""
    M, C = Z.shape[0], Z.shape[2]
    biased = classes.shape[0] > 0
    logsum = np.empty(b - a)
    for i in range(a, b):
        e = E[i - a]
        s = 0.0
        for k in range(C):
            s += e[k]
        logsum[i - a] = np.log(s)
        wi = w[i]
        if wi == 0.0:
            e[:] = 0.0
            continue
        f = wi / s
        for k in range(C):
            e[k] *= f
        y = index[i]
        if biased:
            inv = 1.0 / wi
            for k in range(C):
                p = e[k]
                classes[k] += p
                diag[k] += p * (1.0 - p * inv)
            classes[y] -= wi
        for m in range(M):
            om = offsets[m]
            acc = 0.0
            for k in range(C):
                acc += e[k] * Z[m, i, k]
                bins[om + B[m, i, k]] += e[k]
            zsum[m] += acc - wi * Z[m, i, y]
            bins[om + B[m, i, y]] -= wi
    return logsum


@njit(cache=True, nogil=True)
def weighted_histogram(z, raw, w, lo, scale, out):  # pragma: no cover - compiled
    """Add every pair of ``z`` (r, C) to ``out``'s equal-width bins (``(z - lo) * scale``
    truncated into ``[0, len(out) - 1]``) with weight ``w_i exp(raw_ik)``."""
    top = out.shape[0] - 1
    for i in range(z.shape[0]):
        wi = w[i]
        for k in range(z.shape[1]):
            v = min(max((z[i, k] - lo) * scale, 0.0), top)
            out[int(v)] += wi * math.exp(np.float64(raw[i, k]))  # float32 too: in double


@njit(cache=True, nogil=True)
def bin_pairs(z, w, cuts, bins, counts, sums):  # pragma: no cover - compiled
    """Bin of every pair of ``z`` (r, C) among ``cuts`` (NumPy's ``searchsorted`` with
    ``side="right"``) into ``bins``, and every bin's weight and weighted sum of ``z`` added
    to ``counts`` and ``sums`` (each pair weighted by its row's ``w``)."""
    for i in range(z.shape[0]):
        wi = w[i]
        for k in range(z.shape[1]):
            v = z[i, k]
            b = np.searchsorted(cuts, v, side="right")
            bins[i, k] = b
            counts[b] += wi
            sums[b] += v * wi
