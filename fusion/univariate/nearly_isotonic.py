"""The whole solution path of nearly-isotonic regression (Tibshirani, Hoefling & Tibshirani 2011).

For an ordered sequence ``y_1, ..., y_K`` with weights ``w_k > 0`` the nearly-isotonic fit at
``lambda >= 0`` solves (Naeini & Cooper 2016, eq. (3), with weights)

.. math:: \\hat p_\\lambda = \\arg\\min_p \\; \\tfrac12 \\sum_k w_k (p_k - y_k)^2
          + \\lambda \\sum_{k=1}^{K-1} (p_k - p_{k+1})_+ .

At ``lambda = 0`` the fit is ``y``; for ``lambda`` large enough it is the isotonic regression.
The path is piecewise linear in ``lambda``: the fit is constant on *blocks* of consecutive
points, adjacent blocks are fused when their values collide, and fused blocks never split
again. A block ``B`` with weighted label sum ``S_B`` and weight ``W_B`` has the value

.. math:: p_B(\\lambda) = \\frac{S_B + \\lambda (\\nu_{left} - \\nu_{right})}{W_B},

where ``nu_left`` (``nu_right``) is 1 if the block's left (right) neighbour lies above (below)
it, i.e. the edge is a monotonicity violation, and 0 otherwise (eqs. (5)-(7) of the ENIR paper).
The indicators only change when the block itself is fused, so every block moves with constant
slope over its lifetime and the collision ``lambda`` of two neighbours has a closed form
(eq. (8)). The modified pool-adjacent-violators algorithm (Algorithm 1) therefore only needs a
priority queue of collision times: each fusion is one pop and at most two pushes, so the path
costs ``O(K log K)`` time and ``O(K)`` memory.

Implementation notes
--------------------
* Adjacent points with exactly equal ``y`` are fused at ``lambda = 0`` before the sweep: they
  never separate (a split would open a violation or could not lower the loss), and pooling
  them first makes every remaining edge strictly ordered. For 0/1 labels this reduces the
  problem to runs of equal labels.
* Collision times are computed from the blocks' sums (not by moving values along), so there
  is no drift, and which pairs can collide is decided by the exact 0/1 indicators rather
  than by comparing floating-point values.
* Collisions within a relative ``1e-12`` of the current breakpoint are treated as
  simultaneous (one breakpoint), as the paper's Algorithm 1 merges every pair attaining the
  minimum of eq. (9) at once; neighbours whose values agree at the current ``lambda`` are
  fused at once (see ``_TOUCH_RTOL``), so blocks are exactly the runs of equal fitted values.
* Speed (pure NumPy/Python, no compiled extension): breakpoints at which many blocks fuse
  together (with 0/1 labels, thousands of runs meet at ``lambda = 1/2, 2/3, ...``) are
  processed with whole-array operations; the rest of the sweep runs with one small heap per
  stretch of blocks that cannot interact (points whose isotonic values differ never fuse).
  Neither device changes the result. About 1-2 s of CPU for ``K = 10^6`` 0/1 labels.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from scipy.optimize import isotonic_regression

__all__ = [
    "NearIsotonicPath",
    "pool_ties",
    "near_isotonic_path",
    "path_fit",
    "breakpoint_fit",
    "path_n_blocks",
    "alive_blocks",
    "near_isotonic_objective",
]

#: Collisions within this relative distance of the current breakpoint join that breakpoint.
_SIMULTANEOUS_RTOL = 1e-12
#: Neighbours whose values agree to this relative precision at the current ``lambda`` are
#: fused at once. In exact arithmetic equal neighbours always fuse: with equal values no
#: choice of the edge indicator is consistent unless they move together. This catches
#: three-way collisions (the new block meets its other neighbour at the same ``lambda``, and
#: both may be flat, so eq. (8) has a zero denominator) and keeps blocks equal to the runs of
#: equal fitted values.
_TOUCH_RTOL = 1e-12


@dataclass(frozen=True)
class NearIsotonicPath:
    """The nearly-isotonic solution path as a table of blocks (all plain arrays).

    Breakpoints are numbered ``t = 1..T`` (``lambdas[t - 1]``); ``t = 0`` is ``lambda = 0``
    after fusing equal neighbours. A block is alive on breakpoints ``birth <= t < death``
    (``death = T + 1`` for the blocks of the final, isotonic fit) and covers the points
    ``lo <= k < hi``; its value at ``lambda`` is ``(sum + lambda * drift) / weight``.

    Attributes
    ----------
    lambdas : ndarray of shape (T,)
        Strictly increasing breakpoints (``lambda > 0``) at which blocks fuse.
    lo, hi : ndarray of int
        Range of points covered by each block.
    sum, weight : ndarray of float
        ``sum_k w_k y_k`` and ``sum_k w_k`` over the block.
    drift : ndarray of int
        ``nu_left - nu_right`` in ``{-1, 0, 1}``.
    birth, death : ndarray of int
        Lifetime of each block in breakpoint numbers.
    n_points : int
        ``K``, the length of the fitted sequence.
    """

    lambdas: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    sum: np.ndarray
    weight: np.ndarray
    drift: np.ndarray
    birth: np.ndarray
    death: np.ndarray
    n_points: int

    @property
    def n_breakpoints(self) -> int:
        return int(self.lambdas.shape[0])

    def values(self, blocks: np.ndarray, lam: float) -> np.ndarray:
        """Values of the given blocks at ``lam`` (valid while they are alive)."""
        return (self.sum[blocks] + lam * self.drift[blocks]) / self.weight[blocks]


def pool_ties(
    x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort by ``x`` and pool equal ``x`` into weighted groups.

    Returns
    -------
    x_unique : ndarray of shape (K,)
        Distinct values of ``x``, increasing.
    y_mean : ndarray of shape (K,)
        Weighted mean of ``y`` in each group (0 for a group of zero total weight).
    weight : ndarray of shape (K,)
        Total weight of each group.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(x) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    x_unique, inverse = np.unique(x, return_inverse=True)
    weight = np.bincount(inverse, weights=w, minlength=x_unique.shape[0])
    wy = np.bincount(inverse, weights=w * y, minlength=x_unique.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        y_mean = np.where(weight > 0, wy / np.where(weight > 0, weight, 1.0), 0.0)
    return x_unique, y_mean, weight


def _collision_times(S, W, nu, lam: float) -> np.ndarray:
    """Vectorized eq. (8): collision ``lambda`` of every adjacent pair of current blocks.

    ``nu[i]`` is the indicator of edge ``i`` (between blocks ``i`` and ``i + 1``). Returns
    ``inf`` where the pair never meets and ``lam`` where the two values already agree at
    ``lam`` (see :func:`_touching`).
    """
    nla = np.r_[False, nu[:-1]]  # left indicator of block i
    nrb = np.r_[nu[1:], False]  # right indicator of block i + 1
    Wa, Wb = W[:-1], W[1:]
    m = S / W
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.where(nu, (1 - nla) / Wa + (1 - nrb) / Wb, nla / Wa + nrb / Wb)
        t = np.where(nu, m[:-1] - m[1:], m[1:] - m[:-1]) / den
    va = (S[:-1] + lam * (nla.astype(float) - nu)) / Wa
    vb = (S[1:] + lam * (nu.astype(float) - nrb)) / Wb
    touching = np.abs(va - vb) <= _TOUCH_RTOL * (1.0 + np.abs(vb))
    return np.where(touching, lam, np.where(den > 0, t, np.inf))


class _BlockTable:
    """Growing table of path blocks, filled in chunks of arrays."""

    def __init__(self):
        self.chunks: list[tuple[np.ndarray, ...]] = []
        self.n = 0

    def add(self, lo, hi, S, W, nuL, nuR, birth) -> np.ndarray:
        k = len(lo)
        ids = np.arange(self.n, self.n + k)
        self.chunks.append(
            (
                np.asarray(lo, dtype=np.int64),
                np.asarray(hi, dtype=np.int64),
                np.asarray(S, dtype=float),
                np.asarray(W, dtype=float),
                np.asarray(nuL, dtype=np.int64) - np.asarray(nuR, dtype=np.int64),
                np.broadcast_to(np.asarray(birth, dtype=np.int64), (k,)).copy(),
            )
        )
        self.n += k
        return ids

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(np.concatenate(col) for col in zip(*self.chunks, strict=True))


def near_isotonic_path(
    y, sample_weight=None, *, batch_fraction: float = 1 / 256, chunk_size: int = 2048
) -> NearIsotonicPath:
    """Compute the whole nearly-isotonic path of an ordered sequence (modified PAVA).

    Parameters
    ----------
    y : array-like of shape (K,)
        Targets in their fixed order (e.g. labels sorted by score, ties already pooled with
        :func:`pool_ties`).
    sample_weight : array-like of shape (K,), optional
        Positive weights (``w_k`` in the objective). Default: all ones.
    batch_fraction : float, default=1/256
        Speed knob that does not change the result. Breakpoints at which at least this
        fraction of the current blocks fuse at once (typical early on with 0/1 labels, where
        thousands of runs meet at ``lambda = 1/2``, ``2/3``, ...) are processed with
        whole-array NumPy operations; once breakpoints get sparser the sweep continues one
        fusion at a time with the heap of collision times.
    chunk_size : int, default=2048
        Speed knob that does not change the result: the one-at-a-time sweep runs separately
        on stretches of at least this many blocks that cannot interact (see the notes in the
        code), so that each heap stays small.

    Returns
    -------
    NearIsotonicPath
    """
    y = np.asarray(y, dtype=float).reshape(-1)
    K = y.shape[0]
    w = np.ones(K) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if w.shape != (K,):
        raise ValueError(f"sample_weight must have shape ({K},), got {w.shape}.")
    if K == 0:
        raise ValueError("y is empty; at least one point is needed.")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(w))):
        raise ValueError("y and sample_weight must be finite.")
    if np.any(w <= 0):
        raise ValueError("sample_weight must be positive (drop zero-weight points first).")

    # Fuse runs of equal targets at lambda = 0.
    starts = np.flatnonzero(np.r_[True, y[1:] != y[:-1]])
    W = np.add.reduceat(w, starts)
    S = np.add.reduceat(w * y, starts)
    lo = starts.astype(np.int64)
    hi = np.r_[starts[1:], K].astype(np.int64)
    nu = y[starts][:-1] > y[starts][1:]
    table = _BlockTable()
    ids = table.add(lo, hi, S, W, np.r_[False, nu], np.r_[nu, False], 0)
    deaths: list[tuple[np.ndarray, int]] = []
    lambdas: list[float] = []
    lam, T = 0.0, 0
    tol = _SIMULTANEOUS_RTOL

    # Phase 1: whole breakpoints at once while they are large.
    while S.shape[0] > 1:
        tc = _collision_times(S, W, nu, lam)
        lam_star = tc.min()
        if not np.isfinite(lam_star):
            break
        threshold = max(lam, lam_star) * (1.0 + tol)
        E = tc <= threshold
        if E.sum() < batch_fraction * S.shape[0]:
            break
        if lam_star > lam * (1.0 + tol):
            lam = float(lam_star)
            T += 1
            lambdas.append(lam)
        head = np.r_[True, ~E]  # block i starts a new fused group unless edge i-1 fuses
        first = np.flatnonzero(head)
        last = np.r_[first[1:] - 1, S.shape[0] - 1]
        S = np.add.reduceat(S, first)
        W = np.add.reduceat(W, first)
        fused = last > first
        nuL_new = np.r_[False, nu][first]
        nuR_new = np.r_[nu, False][last]
        gone = np.flatnonzero(~head | np.r_[E, False])  # members of fused groups
        deaths.append((ids[gone], T))
        new_ids = ids[first]
        new_ids[fused] = table.add(
            lo[first[fused]], hi[last[fused]], S[fused], W[fused], nuL_new[fused], nuR_new[fused], T
        )
        ids = new_ids
        lo, hi = lo[first], hi[last]
        nu = nu[~E]

    # Phase 2: one fusion at a time with a heap of collision times, separately on chunks of
    # blocks that can never interact. Points with different isotonic values are never fused
    # (fusion is permanent and the path ends at the isotonic fit), and an edge between them
    # never violates monotonicity (a violation persists until a fusion), so the sweep splits
    # exactly there; small heaps also stay in cache.
    n_cur = S.shape[0]
    iso = isotonic_regression(S / W, weights=W).x
    scale = max(1.0, float(np.abs(iso).max()))
    cuts = np.flatnonzero(np.diff(iso) > 1e-9 * scale) + 1
    bounds = [0]
    for c in cuts.tolist():
        if c - bounds[-1] >= chunk_size:
            bounds.append(c)
    bounds.append(n_cur)
    ev_lams: list[np.ndarray] = []
    born: list[tuple] = []
    died: list[tuple[np.ndarray, np.ndarray]] = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a < 2:
            continue
        out = _sweep(S[a:b], W[a:b], nu[a : b - 1], lo[a:b], hi[a:b], lam)
        ev_lams.append(out[0])
        born.append(out[1])
        local_ids = np.concatenate([ids[a:b], np.full(out[2].shape[0] - (b - a), -1)])
        died.append((local_ids, out[2]))
        # ids of the chunk's new blocks are assigned once the breakpoints are known

    # Number the phase-2 breakpoints, treating collisions within tol as simultaneous.
    all_ev = np.unique(np.concatenate(ev_lams)) if ev_lams else np.empty(0)
    starts_bp: list[float] = []
    cur = lam
    for x in all_ev.tolist():
        if x > cur * (1.0 + tol):
            cur = x
            starts_bp.append(x)
    bp = np.asarray(starts_bp, dtype=float)
    lambdas.extend(starts_bp)
    T_final = T + bp.shape[0]

    def number(x: np.ndarray) -> np.ndarray:
        return T + np.searchsorted(bp, x, side="right")

    death_a_parts: list[tuple[np.ndarray, np.ndarray]] = []
    for (local_ids, death_lam), (blo, bhi, bS, bW, bnl, bnr, bbirth) in zip(
        died, born, strict=True
    ):
        new_ids = table.add(blo, bhi, bS, bW, bnl, bnr, number(bbirth))
        n_old = local_ids.shape[0] - new_ids.shape[0]
        local_ids = local_ids.copy()
        local_ids[n_old:] = new_ids
        ok = np.isfinite(death_lam)
        death_a_parts.append((local_ids[ok], number(death_lam[ok])))

    lo_a, hi_a, S_a, W_a, drift, birth_a = table.arrays()
    death_a = np.full(table.n, T_final + 1, dtype=np.int64)
    for gone, t_death in deaths:
        death_a[gone] = t_death
    for gone, t_death in death_a_parts:
        death_a[gone] = t_death
    return NearIsotonicPath(
        lambdas=np.asarray(lambdas, dtype=float),
        lo=lo_a,
        hi=hi_a,
        sum=S_a,
        weight=W_a,
        drift=drift,
        birth=birth_a,
        death=death_a,
        n_points=K,
    )


def _sweep(S, W, nu, lo, hi, lam: float):
    """Modified PAVA with a heap on one chunk of blocks whose outer edges never violate.

    Returns the ``lambda`` of every fusion, the new blocks ``(lo, hi, S, W, nu_left,
    nu_right, birth_lambda)`` and the death ``lambda`` of every block of the chunk (old
    blocks first, then new ones; ``inf`` for survivors).
    """
    n_cur = S.shape[0]
    tc = _collision_times(S, W, nu, lam)
    ok = np.isfinite(tc)
    a0 = np.flatnonzero(ok)
    heap = list(zip(np.maximum(tc[ok], lam).tolist(), a0.tolist(), [0] * a0.shape[0], strict=True))
    heapq.heapify(heap)
    cap = 2 * n_cur - 1
    pad = cap - n_cur
    Sl = S.tolist() + [0.0] * pad
    Wl = W.tolist() + [0.0] * pad
    nu_list = nu.tolist()
    nuL = [False] + nu_list + [False] * pad
    nuR = nu_list + [False] + [False] * pad
    lol = lo.tolist() + [0] * pad
    hil = hi.tolist() + [0] * pad
    left = list(range(-1, n_cur - 1)) + [-1] * pad
    right = list(range(1, n_cur)) + [-1] + [-1] * pad
    # A heap entry (lambda, a, version) is valid while version[a] is unchanged: it is bumped
    # when a dies or when a's right neighbour changes.
    version = [0] * cap
    inf = np.inf
    at = [inf] * cap  # birth lambda of new blocks, death lambda of every block
    death = [inf] * cap
    events: list[float] = []
    nxt = n_cur
    pop, push = heapq.heappop, heapq.heappush
    touch = _TOUCH_RTOL
    while heap:
        t, a, ver = pop(heap)
        if ver != version[a]:
            continue
        if t < lam:
            t = lam
        lam = t
        events.append(t)
        b = right[a]
        M = nxt
        nxt += 1
        Sm = Sl[a] + Sl[b]
        Wm = Wl[a] + Wl[b]
        nl = nuL[a]
        nr = nuR[b]
        Sl[M] = Sm
        Wl[M] = Wm
        nuL[M] = nl
        nuR[M] = nr
        lol[M] = lol[a]
        hil[M] = hil[b]
        at[M] = t
        death[a] = t
        death[b] = t
        version[a] += 1
        version[b] += 1
        L = left[a]
        R = right[b]
        left[M] = L
        right[M] = R
        mm = Sm / Wm
        vM = (Sm + lam * (nl - nr)) / Wm
        if L >= 0:
            right[L] = M
            version[L] += 1
            WL = Wl[L]
            vL = (Sl[L] + lam * (nuL[L] - nl)) / WL
            if abs(vL - vM) <= touch * (1.0 + abs(vM)):
                tc_ = lam
            elif nl:  # L above M
                den = (1 - nuL[L]) / WL + (1 - nr) / Wm
                tc_ = (Sl[L] / WL - mm) / den if den > 0 else inf
            else:
                den = nuL[L] / WL + nr / Wm
                tc_ = (mm - Sl[L] / WL) / den if den > 0 else inf
            if tc_ < inf:
                push(heap, (tc_ if tc_ > lam else lam, L, version[L]))
        if R >= 0:
            left[R] = M
            WR = Wl[R]
            vR = (Sl[R] + lam * (nr - nuR[R])) / WR
            if abs(vR - vM) <= touch * (1.0 + abs(vM)):
                tc_ = lam
            elif nr:  # M above R
                den = (1 - nl) / Wm + (1 - nuR[R]) / WR
                tc_ = (mm - Sl[R] / WR) / den if den > 0 else inf
            else:
                den = nl / Wm + nuR[R] / WR
                tc_ = (Sl[R] / WR - mm) / den if den > 0 else inf
            if tc_ < inf:
                push(heap, (tc_ if tc_ > lam else lam, M, 0))
    sl = slice(n_cur, nxt)
    new_blocks = (
        np.asarray(lol[sl], dtype=np.int64),
        np.asarray(hil[sl], dtype=np.int64),
        np.asarray(Sl[sl], dtype=float),
        np.asarray(Wl[sl], dtype=float),
        np.asarray(nuL[sl], dtype=bool),
        np.asarray(nuR[sl], dtype=bool),
        np.asarray(at[sl], dtype=float),
    )
    return np.asarray(events, dtype=float), new_blocks, np.asarray(death[:nxt], dtype=float)


def _expand(path: NearIsotonicPath, blocks: np.ndarray, block_values: np.ndarray) -> np.ndarray:
    """Point values from the values of a set of blocks that partitions the points."""
    out = np.empty(path.n_points)
    counts = path.hi[blocks] - path.lo[blocks]
    order = np.argsort(path.lo[blocks], kind="stable")
    out[:] = np.repeat(block_values[order], counts[order])
    return out


def alive_blocks(path: NearIsotonicPath, t: int) -> np.ndarray:
    """Indices of the blocks alive at breakpoint ``t`` (``0 <= t <= T``)."""
    return np.flatnonzero((path.birth <= t) & (path.death > t))


def path_fit(path: NearIsotonicPath, lam: float) -> np.ndarray:
    """The nearly-isotonic fit at any ``lam >= 0`` (piecewise linear between breakpoints)."""
    if not lam >= 0:
        raise ValueError(f"lam must be non-negative, got {lam}.")
    t = int(np.searchsorted(path.lambdas, lam, side="right"))
    blocks = alive_blocks(path, t)
    return _expand(path, blocks, path.values(blocks, lam))


def breakpoint_fit(path: NearIsotonicPath, t: int) -> np.ndarray:
    """The fit at breakpoint ``t`` in ``1..T`` (the model ENIR keeps for that breakpoint)."""
    if not 1 <= t <= path.n_breakpoints:
        raise ValueError(f"breakpoint number must be in 1..{path.n_breakpoints}, got {t}.")
    blocks = alive_blocks(path, t)
    return _expand(path, blocks, path.values(blocks, path.lambdas[t - 1]))


def path_n_blocks(path: NearIsotonicPath) -> np.ndarray:
    """Number of blocks (distinct consecutive fitted values) at breakpoints ``0..T``."""
    T = path.n_breakpoints
    diff = np.bincount(path.birth, None, T + 2) - np.bincount(path.death, None, T + 2)
    return np.cumsum(diff)[: T + 1].astype(np.int64)


def near_isotonic_objective(p, y, lam: float, sample_weight=None) -> float:
    """``0.5 * sum w (p - y)^2 + lam * sum (p_k - p_{k+1})_+`` (for checks)."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return float(0.5 * np.sum(w * (p - y) ** 2) + lam * np.sum(np.maximum(p[:-1] - p[1:], 0.0)))
