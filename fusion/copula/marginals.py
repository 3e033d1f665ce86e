"""Class-conditional marginals of the normalized scores: atoms at tied values, KDE elsewhere.

A score that takes few values (a 0/1 classifier, a 5-level rating) or has a value of positive
probability (a score clipped at 0) is not continuous, and neither a kernel density nor a
copula density describes it: its pseudo-observations pile up on a few points, where a
maximum-likelihood copula fit runs to the bounds of its parameter (a 0/1 scorer looks
perfectly dependent on any other) and the fused probability ends up badly calibrated.

Model (the continuous extension of Denuit & Lambert 2005, integrated instead of jittered)
    On the mid-distribution ECDF scale (:mod:`fusion.ecdf`) a tied training value ``s``
    occupies the interval ``I_s = [F(s-), F(s)]`` of its pooled probability, centred on its
    normalized value. A tie group whose interval is at least as wide as the kernel a Gaussian
    KDE of that many uniform points would use, ``width >= 0.9 n_eff^(-1/5) / sqrt(12)``
    (Silverman's rule for the uniform distribution; 0.065 at ``n_eff = 1,000``), is an
    **atom**; narrower ties are left to the KDE as before, which smooths across them.

    * Each class ``l`` gives atom ``a`` the mass ``q_la``: its weighted class frequency
      (mixed with the pooled width at weight ``1e-9``, like the KDE's defensive floor, so that
      no class has zero probability anywhere). The class-conditional distribution spreads
      ``q_la`` uniformly over ``I_a``.
    * The remaining mass ``r_l = 1 - sum_a q_la`` follows the reflected KDE of the class's
      other points on the *compressed* scale, where the atoms' intervals are cut out and the
      rest rescaled to ``[0, 1]`` (:func:`compress`), so no kernel mass leaks into an atom.

    The class's pseudo-observation of a score at atom ``a`` is then the interval
    ``[G_l(F(s-)), G_l(F(s))]`` of width ``q_la`` (``G_l`` the class-conditional CDF on the
    normalized scale), and the copula enters the likelihood through the probability of the
    rectangle those intervals span, with the density in the continuous coordinates
    (:meth:`fusion.copula.family.Copula.log_ratio`) -- the exact likelihood of mixed
    discrete/continuous data under a copula model (Genest & Neslehova 2007). For two 0/1
    scorers and a one-parameter family it reproduces the four cell frequencies of each class.
    Without ties every column is continuous and the model is exactly the KDE one.

Everything here is a function of plain arrays; :class:`~fusion.copula.CopulaFusion` stores
their results as fitted attributes.
"""

from __future__ import annotations

import numpy as np

from .kde import (
    DEFENSIVE_WEIGHT,
    effective_size,
    grid_position,
    grid_size,
    interpolate,
    reflected_kde,
    select_bandwidth,
)

__all__ = [
    "atom_threshold",
    "tie_intervals",
    "find_atoms",
    "compress",
    "fit_marginals",
    "evaluate",
]

#: Normalized values within this distance of an atom's value are at the atom.
ATOM_TOL = 1e-12
#: A column whose atoms leave less than this of ``[0, 1]`` has no continuous part.
_TILED = 1e-9


def atom_threshold(n_eff: float) -> float:
    """Narrowest ECDF interval of an atom: Silverman's bandwidth for ``n_eff`` uniform points."""
    return 0.9 / np.sqrt(12.0) * float(n_eff) ** -0.2


def tie_intervals(u: np.ndarray):
    """Distinct values of a mid-ECDF-normalized column and the ECDF interval of each.

    The mid-distribution value of a tie group is the centre of its interval and the intervals
    tile ``[0, 1]``, so they follow from the values alone (``a_1 = 0``, ``b_j = 2 v_j - a_j``),
    whether the ECDF counted rows or weights.

    Returns
    -------
    values, lower, upper, counts : ndarray
        Or None when the values are not a mid-ECDF of these rows (an ECDF summarized by a
        sketch, for instance); the column is then treated as continuous.
    """
    values, counts = np.unique(u, return_counts=True)
    sign = np.where(np.arange(values.shape[0]) % 2 == 0, 1.0, -1.0)
    upper = 2.0 * sign * np.cumsum(sign * values)
    lower = np.concatenate([[0.0], upper[:-1]])
    if not (np.all(upper - lower > -1e-9) and abs(upper[-1] - 1.0) < 1e-6):
        return None
    upper[-1] = 1.0  # exactly, so that tie groups covering every value tile [0, 1]
    return values, lower, np.maximum(upper, lower), counts


def find_atoms(U: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """The atoms of every column of the normalized training scores.

    Parameters
    ----------
    U : ndarray of shape (n, M)
        Every training row the ECDF was fitted on.
    w : ndarray of shape (n,)
        Non-negative weights (for the effective size in :func:`atom_threshold`).

    Returns
    -------
    dict
        ``column`` (A,) int, ``value`` (A,), ``interval`` (A, 2): each atom's column, its
        normalized value and its ECDF interval, by column then value.
    """
    tau = atom_threshold(effective_size(w[w > 0]))
    column, value, interval = [], [], []
    for m in range(U.shape[1]):
        ties = tie_intervals(U[:, m])
        if ties is None:
            continue
        values, lower, upper, counts = ties
        sel = (counts >= 2) & (upper - lower >= tau)
        column.append(np.full(int(sel.sum()), m, dtype=np.int64))
        value.append(values[sel])
        interval.append(np.column_stack([lower[sel], upper[sel]]))
    if not column:
        return {
            "column": np.zeros(0, dtype=np.int64),
            "value": np.zeros(0),
            "interval": np.zeros((0, 2)),
        }
    return {
        "column": np.concatenate(column),
        "value": np.concatenate(value),
        "interval": np.vstack(interval),
    }


def compress(u: np.ndarray, interval: np.ndarray) -> np.ndarray:
    """Map normalized values to ``[0, 1]`` with the atoms' intervals cut out.

    ``t = (u - |[0, u] inside atoms|) / (1 - total atom width)``; ``interval`` holds one
    column's atoms (not the whole of ``[0, 1]``).
    """
    rest = 1.0 - np.sum(interval[:, 1] - interval[:, 0])
    if rest <= _TILED:
        return np.zeros_like(u)  # the atoms cover [0, 1]: there is no continuous part
    covered = np.zeros_like(u)
    for a, b in interval:
        covered += np.clip(u - a, 0.0, b - a)
    return np.clip((u - covered) / rest, 0.0, 1.0)


def _locate(u: np.ndarray, value: np.ndarray, interval: np.ndarray):
    """Per value: index of the atom it is at (-1 if none) and of the atom interval it is in."""
    at = np.full(u.shape[0], -1, dtype=np.int64)
    inside = np.full(u.shape[0], -1, dtype=np.int64)
    for a, (v, (lo, hi)) in enumerate(zip(value, interval, strict=True)):
        inside[(u >= lo) & (u <= hi)] = a
        at[np.abs(u - v) <= ATOM_TOL] = a
    return at, inside


def fit_marginals(
    U: np.ndarray,
    rows: list[np.ndarray],
    weights: list[np.ndarray],
    atoms: dict[str, np.ndarray],
    bandwidth,
) -> dict[str, np.ndarray]:
    """Fit both classes' marginals.

    Parameters
    ----------
    U : ndarray of shape (n, M)
        Normalized training scores.
    rows : list of two boolean arrays
        Rows of each class (positive weight only).
    weights : list of two arrays
        Those rows' weights.
    atoms : dict
        From :func:`find_atoms`.
    bandwidth : {"silverman", "scott", "cv"} or float
        See :func:`fusion.copula.kde.select_bandwidth`; applied to the continuous part on the
        compressed scale (NaN where a column has no continuous part).

    Returns
    -------
    dict
        ``bandwidths`` (2, M), ``log_pdf`` and ``cdf`` (2, M, G) of the continuous parts on
        the compressed scale, ``continuous_mass`` (2, M), and per atom ``atom_mass`` (2, A)
        and ``atom_cdf`` (2, A), the class CDF at the atom's lower end.
    """
    M = U.shape[1]
    A = atoms["value"].shape[0]
    points, pweights = [[None] * M, [None] * M], [[None] * M, [None] * M]
    bandwidths = np.full((2, M), np.nan)
    atom_mass = np.zeros((2, A))
    continuous_mass = np.ones((2, M))
    for c in range(2):
        Uc, wc = U[rows[c]], weights[c]
        total = wc.sum()
        for m in range(M):
            mine = atoms["column"] == m
            if not mine.any():
                points[c][m], pweights[c][m] = Uc[:, m], wc
                bandwidths[c, m] = select_bandwidth(Uc[:, m], wc, bandwidth)
                continue
            interval = atoms["interval"][mine]
            at, _ = _locate(Uc[:, m], atoms["value"][mine], interval)
            raw = np.array([wc[at == a].sum() for a in range(interval.shape[0])]) / total
            mass = (1.0 - DEFENSIVE_WEIGHT) * raw + DEFENSIVE_WEIGHT * (
                interval[:, 1] - interval[:, 0]
            )
            atom_mass[c, mine] = mass
            tiled = 1.0 - np.sum(interval[:, 1] - interval[:, 0]) <= _TILED
            continuous_mass[c, m] = 0.0 if tiled else max(1.0 - mass.sum(), 0.0)
            free = at < 0
            if free.any() and continuous_mass[c, m] > 0:
                points[c][m] = compress(Uc[free, m], interval)
                pweights[c][m] = wc[free]
                bandwidths[c, m] = select_bandwidth(points[c][m], pweights[c][m], bandwidth)
    finite = bandwidths[np.isfinite(bandwidths)]
    n_grid = grid_size(float(finite.min())) if finite.size else grid_size(1.0)
    log_pdf = np.zeros((2, M, n_grid))
    cdf = np.tile(np.linspace(0.0, 1.0, n_grid), (2, M, 1))
    for c in range(2):
        for m in range(M):
            if np.isfinite(bandwidths[c, m]):
                log_pdf[c, m], cdf[c, m] = reflected_kde(
                    points[c][m], pweights[c][m], bandwidths[c, m], n_grid
                )
    fitted = {
        "bandwidths": bandwidths,
        "log_pdf": log_pdf,
        "cdf": cdf,
        "continuous_mass": continuous_mass,
        "atom_mass": atom_mass,
        "atom_cdf": np.zeros((2, A)),
    }
    for c in range(2):
        for m in range(M):
            mine = np.flatnonzero(atoms["column"] == m)
            if mine.size:
                lower = atoms["interval"][mine, 0]
                fitted["atom_cdf"][c, mine] = _continuous_cdf(lower, c, m, fitted, atoms)
    return fitted


def _continuous_cdf(u, c, m, fitted, atoms) -> np.ndarray:
    """Class ``c``'s CDF on the normalized scale at values ``u`` outside column ``m``'s atoms
    (or at their ends): atom mass below plus the continuous part's CDF."""
    mine = atoms["column"] == m
    interval = atoms["interval"][mine]
    n_grid = fitted["cdf"].shape[2]
    i, frac = grid_position(compress(u, interval), n_grid)
    below = np.zeros_like(u)
    for (_, hi), q in zip(interval, fitted["atom_mass"][c, mine], strict=True):
        below += np.where(u >= hi, q, 0.0)
    r = fitted["continuous_mass"][c, m]
    return below + r * interpolate(fitted["cdf"][c, m], i, frac) if r > 0 else below


def evaluate(
    U: np.ndarray, c: int, fitted: dict[str, np.ndarray], atoms: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class ``c``'s pseudo-observations and marginal log-likelihood at normalized points.

    Returns
    -------
    lower, upper : ndarray of shape (n, M)
        The class's pseudo-observations: equal ends for continuous coordinates, the interval
        ``[G(F(s-)), G(F(s))]`` for a coordinate at an atom.
    log_marginal : ndarray of shape (n,)
        ``sum_m log f_cm(u_m)`` over continuous coordinates plus ``log q_ca`` over atoms.
    """
    n, M = U.shape
    n_grid = fitted["cdf"].shape[2]
    lower = np.empty((n, M))
    upper = np.empty((n, M))
    log_marginal = np.zeros(n)
    for m in range(M):
        mine = np.flatnonzero(atoms["column"] == m)
        u = U[:, m]
        if not mine.size:
            i, frac = grid_position(u, n_grid)
            log_marginal += interpolate(fitted["log_pdf"][c, m], i, frac)
            lower[:, m] = upper[:, m] = interpolate(fitted["cdf"][c, m], i, frac)
            continue
        interval = atoms["interval"][mine]
        width = interval[:, 1] - interval[:, 0]
        mass, base = fitted["atom_mass"][c, mine], fitted["atom_cdf"][c, mine]
        at, inside = _locate(u, atoms["value"][mine], interval)
        free = inside < 0
        if free.any():
            r = fitted["continuous_mass"][c, m]
            i, frac = grid_position(compress(u[free], interval), n_grid)
            log_f = interpolate(fitted["log_pdf"][c, m], i, frac)
            with np.errstate(divide="ignore"):
                log_marginal[free] += np.log(r) + log_f - np.log1p(-width.sum())
            lower[free, m] = upper[free, m] = _continuous_cdf(u[free], c, m, fitted, atoms)
        plateau = (inside >= 0) & (at < 0)
        if plateau.any():
            a = inside[plateau]
            # the continuous extension: the atom's mass spread evenly over its interval
            log_marginal[plateau] += np.log(mass[a] / width[a])
            lower[plateau, m] = upper[plateau, m] = (
                base[a] + mass[a] * (u[plateau] - interval[a, 0]) / width[a]
            )
        hit = at >= 0
        if hit.any():
            a = at[hit]
            log_marginal[hit] += np.log(mass[a])
            lower[hit, m] = base[a]
            upper[hit, m] = np.minimum(base[a] + mass[a], 1.0)
    return lower, upper, log_marginal
