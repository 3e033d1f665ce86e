"""Compiled loops over the (row, class) pairs of the class-shared model: every row's shifted
linear predictor, and from its exponentials the log-loss and the sums the gradient is made
of; the scorers' weighted histograms and the pairs' bins (:mod:`.pairs`); the model's
logits as it predicts, every pair at its own normalized value (:mod:`.model`); the
top-label correction's held-out loss and its derivatives (:mod:`.toplabel`).

Why compiled: every Newton step of every fold is one pass over ``n x C`` pairs, and NumPy
took about thirty array passes for one (a gather and a multiply-add per scorer, the softmax,
a weighted histogram per scorer): about 100 ns per pair at five scorers. Here a pass reads
every pair twice, and the exponentials between the two loops are NumPy's (vectorized, four
times faster than a compiled scalar loop's). Searches among sorted cuts or knots start from
an even grid's cell (:func:`bin_lookup`): a binary search mispredicts a branch per level.
Numba is imported when a class-shared fit first needs it; its compiled code is cached on
disk.

The arithmetic is that of :mod:`.multinomial`: for row ``i``, ``eta_k = sum_m (c_m z_mk +
G_m[bin_mk]) + b_k``, logits below the row's largest by more than :data:`SOFTMAX_FLOOR`
raised to it, ``loss_i = log sum_k exp(eta_k - top) - (eta_y - top)``. Every loop takes the
block's whole arrays and a range of its rows (a slice of the rows would be a strided view,
which the compiled loops index at half the speed).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "SOFTMAX_FLOOR",
    "shifted_logits",
    "gradient_sums",
    "weighted_histogram",
    "bin_pairs",
    "bin_lookup",
    "add_member_terms",
    "segment_lookup",
    "correction_stats",
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
def weighted_histogram(z, p, w, lo, scale, out):  # pragma: no cover - compiled
    """Add every pair of ``z`` (r, C) to ``out``'s equal-width bins (``(z - lo) * scale``
    truncated into ``[0, len(out) - 1]``) with weight ``w_i p_ik`` (``p``: the pairs'
    probabilities in double precision, from NumPy's vectorized ``exp``)."""
    top = out.shape[0] - 1
    for i in range(z.shape[0]):
        wi = w[i]
        for k in range(z.shape[1]):
            v = min(max((z[i, k] - lo) * scale, 0.0), top)
            out[int(v)] += wi * p[i, k]


@njit(cache=True, nogil=True)
def bin_pairs(z, w, cuts, grid_lo, grid_scale, starts, bins, counts, sums):  # pragma: no cover
    """Bin of every pair of ``z`` (r, C) among ``cuts`` (NumPy's ``searchsorted`` with
    ``side="right"``) into ``bins``, and every bin's weight and weighted sum of ``z`` added
    to ``counts`` and ``sums`` (each pair weighted by its row's ``w``).

    A binary search costs a mispredicted branch per level (45 ns a pair over 255 cuts); the
    search starts instead from ``starts[g]``, the bin of the left edge of the pair's cell
    ``g`` of an even grid (``(z - grid_lo) * grid_scale``, :func:`bin_lookup`), and steps
    to the pair's bin, which is exact whatever the rounding of ``g``."""
    n_cuts = cuts.shape[0]
    top = starts.shape[0] - 1
    for i in range(z.shape[0]):
        wi = w[i]
        for k in range(z.shape[1]):
            v = z[i, k]
            g = min(max((v - grid_lo) * grid_scale, 0.0), top)
            b = starts[int(g)]
            while b < n_cuts and cuts[b] <= v:
                b += 1
            while b > 0 and cuts[b - 1] > v:
                b -= 1
            bins[i, k] = b
            counts[b] += wi
            sums[b] += v * wi


#: Cells of :func:`bin_lookup`'s grid per cut.
LOOKUP_CELLS = 16


def bin_lookup(cuts: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``grid_lo``, ``grid_scale`` and ``starts`` of :func:`bin_pairs` for ``cuts``: an
    even grid of :data:`LOOKUP_CELLS` cells per cut over their range."""
    cuts = np.asarray(cuts, dtype=np.float64)
    if cuts.shape[0] < 2 or not cuts[-1] > cuts[0]:
        return 0.0, 0.0, np.zeros(1, dtype=np.intp)
    cells = LOOKUP_CELLS * cuts.shape[0]
    scale = cells / (cuts[-1] - cuts[0])
    edges = cuts[0] + np.arange(cells) / scale
    return float(cuts[0]), float(scale), np.searchsorted(cuts, edges, side="right").astype(np.intp)


@njit(cache=True, nogil=True)
def add_member_terms(
    z, knots, values, width, rise, grid_lo, grid_scale, starts, coef, binom, tiny, cm, eta
):  # pragma: no cover - compiled
    """``eta[i, k] += cm * z[i, k]``, then ``+= g(F(z[i, k]))`` for one scorer's rows ``z``
    (r, C): ``F`` its piecewise-linear normalization (knots, values, every segment's
    ``width`` and ``rise``: the same operations as :class:`fusion.ecdf.KnotLookup`'s, with
    the segment found from an even grid as in :func:`bin_pairs`) and ``g`` the Bernstein
    polynomial with coefficients ``coef`` (its basis as :mod:`fusion.bernstein.basis` forms
    it: powers by products, times the binomials ``binom``, values below ``tiny`` set to 0).

    The model as it predicts, one pass per scorer instead of a lookup and a basis matrix
    (about 170 ns per pair and scorer in NumPy)."""
    last = knots.shape[0] - 2
    top = starts.shape[0] - 1
    K = coef.shape[0] - 1
    C = z.shape[1]
    small = tiny / (2.0 * binom.max())
    # a row's classes side by side in every loop: independent lanes the compiler vectorizes
    # (one pair at a time, the powers were chains of dependent products, 100 ns a pair)
    u = np.empty(C)
    up = np.empty(C)
    vp = np.empty((K + 1, C))
    g = np.empty(C)
    for i in range(z.shape[0]):
        for k in range(C):
            x = np.float64(z[i, k])
            s = starts[int(min(max((x - grid_lo) * grid_scale, 0.0), top))]
            while s < last and knots[s + 1] <= x:
                s += 1
            while s > 0 and knots[s] > x:
                s -= 1
            t = min(max((x - knots[s]) / width[s], 0.0), 1.0)
            hi = values[s + 1]
            u[k] = hi if t >= 1.0 else min(rise[s] * t + values[s], hi)
        # a power below `small` only enters basis values below `tiny`, which are 0: set at
        # once, it never goes subnormal (100 times slower; at 1,000 classes most pairs' u is
        # tiny)
        for k in range(C):
            vp[0, k] = 1.0
            up[k] = 1.0
            g[k] = 0.0
        for j in range(1, K + 1):
            for k in range(C):
                v = 1.0 - u[k]
                prev = vp[j - 1, k]
                vp[j, k] = prev * v if prev >= small and v >= small else 0.0
        for j in range(K + 1):
            cj, bj = coef[j], binom[j]
            for k in range(C):
                if j > 0:
                    prev = up[k]
                    up[k] = prev * u[k] if prev >= small and u[k] >= small else 0.0
                b = up[k] * vp[K - j, k] * bj
                if b < tiny:
                    b = 0.0
                g[k] += cj * b
        for k in range(C):
            e = eta[i, k] + cm * np.float64(z[i, k])
            eta[i, k] = e + g[k]


def segment_lookup(knots: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``grid_lo``, ``grid_scale`` and ``starts`` of :func:`add_member_terms` for
    ``knots``: every cell's last knot at or below its left edge, as a segment index."""
    knots = np.asarray(knots, dtype=np.float64)
    lo, scale, starts = bin_lookup(knots)
    return lo, scale, np.clip(starts - 1, 0, max(knots.shape[0] - 2, 0)).astype(np.intp)


@njit(cache=True, nogil=True)
def score_ranges(S, out, flags):  # pragma: no cover
    """One pass over scores ``S`` (r, M, C) for :class:`~.pairs.ScoreRange`: ``out`` (3, M)
    every scorer's smallest and largest finite score and largest distance of a row's sum
    (in float64) from 1 (``inf`` if a row's sum is not finite), ``flags`` (3, M) whether
    any score is ``-inf``, ``+inf``, NaN; both start as they are given."""
    r, M, C = S.shape
    for i in range(r):
        for m in range(M):
            lo, hi, s = out[0, m], out[1, m], 0.0
            for k in range(C):
                v = np.float64(S[i, m, k])
                s += v
                if v - v == 0.0:  # finite
                    if v < lo:
                        lo = v
                    if v > hi:
                        hi = v
                elif v != v:
                    flags[2, m] = True
                elif v > 0.0:
                    flags[1, m] = True
                else:
                    flags[0, m] = True
            out[0, m], out[1, m] = lo, hi
            dev = abs(s - 1.0)
            if not dev <= out[2, m]:  # larger, or NaN / inf
                out[2, m] = dev if dev - dev == 0.0 else np.inf


@njit(cache=True, nogil=True)
def correction_stats(  # pragma: no cover
    indptr, logp, B, label, tail, tail_B, w, theta, loss, grad, q, G
):
    """One pass over the top-label correction's held-out sample (:class:`.toplabel.Sample`)
    at ``theta``: every row's log-loss into ``loss`` (n,), the weighted sum of the losses
    (returned) and of their gradients into ``grad`` (K,, starting at 0). Row ``r``'s kept
    entries ``i`` have logits ``E_i = log p_i + B_i theta``, its tail (the classes not kept)
    the mass ``tail_r + tail_B_r theta``; ``Z_r = sum_i exp(E_i - top_r) + (tail mass)
    exp(-top_r)``, ``top_r`` the largest ``E_i``, and ``loss_r = log Z_r + top_r - E_label``.
    For the Hessian (``q`` and ``G`` not empty): ``q_i = w_r exp(E_i - top_r) / Z_r`` and
    ``G_r`` (n, K) the row's expected basis, so that the Hessian is ``B' diag(q) B - G'
    diag(w) G`` (two matrix products, left to BLAS: in this loop they took twice the rest)."""
    n, K = w.shape[0], theta.shape[0]
    keep = q.shape[0] > 0
    longest = 0
    for r in range(n):
        longest = max(longest, indptr[r + 1] - indptr[r])
    e = np.empty(longest)
    g = np.empty(K)
    value = 0.0
    for r in range(n):
        a, b = indptr[r], indptr[r + 1]
        top = -np.inf
        for i in range(a, b):
            v = logp[i]
            for k in range(K):
                v += B[i, k] * theta[k]
            e[i - a] = v
            if v > top:
                top = v
        picked = e[label[r] - a]
        scale = np.exp(-top)
        mass = tail[r]
        for k in range(K):
            mass += tail_B[r, k] * theta[k]
            g[k] = tail_B[r, k] * scale
        Z = mass * scale
        for i in range(a, b):
            x = np.exp(e[i - a] - top)
            e[i - a] = x
            Z += x
            for k in range(K):
                g[k] += x * B[i, k]
        lr = np.log(Z) + top - picked
        loss[r] = lr
        wr = w[r]
        value += wr * lr
        y = label[r]
        for k in range(K):
            g[k] /= Z
            grad[k] += wr * (g[k] - B[y, k])
        if keep:
            f = wr / Z
            for i in range(a, b):
                q[i] = f * e[i - a]
            for k in range(K):
                G[r, k] = g[k]
    return value
