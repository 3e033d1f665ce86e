"""Copula families, one class per family, and the name-level helpers built on them.

Each family is a subclass of :class:`fusion.copula.family.Copula`, defined by kind in
:mod:`~fusion.copula.independence`, :mod:`~fusion.copula.elliptical`,
:mod:`~fusion.copula.archimedean` and :mod:`~fusion.copula.plackett` (as statsmodels splits
its copulas); its ``family`` name registers it, so **adding a family means adding a class**
(its log-density, mixed derivatives ``_partial``, fits and sampler) in the module of its kind,
and its place in the order of ``_CLASSES`` below. The estimator
refers to families by name: ``"clayton"``, or ``"clayton_rot180"`` for a rotation, and
:data:`FAMILIES` (the default candidates), :func:`make`, :func:`log_density`, :func:`sample`
and :func:`n_params` turn names into objects.

Every density is written in closed form with NumPy/SciPy and evaluated in log space, so it
stays finite for pseudo-observations clipped into ``[EPS, 1 - EPS]`` at every parameter inside
the bounds (large dependence parameters make ``u**-theta`` or ``exp(theta)`` overflow when
computed naively).

Why not ``copulae``
    The Gaussian, Student-t, Clayton, Frank and Gumbel densities are the ones ``copulae``
    implements and are cross-checked against it in the tests (it is a test dependency, not a
    runtime one): they agree to 1e-8 under the supported NumPy (2.x), so ``copulae`` is
    correct for them, but it is not used because (i) evaluating them through ``copulae``
    objects costs 0.25-1 ms per call, and the same bounded fits run 15-40x slower through it
    (``benchmarks/bench_copula.py``: a maximum-likelihood fit calls them hundreds of times);
    (ii) ``copulae`` 0.7-0.8 returns NaN for the bivariate Frank copula with a negative
    parameter and its Frank sampler is wrong for M > 2 (pairwise Kendall's tau 0.25 instead of
    0.46 at ``theta = 5``); (iii) it has neither Plackett nor rotations, nor the conditional
    distributions (h-functions) and rectangle probabilities that discrete scores need.

Families and parameters (``params`` dicts hold plain floats / arrays):

=================  =====================  =======================================  ==========
family             params                 bounds used by the fit                   dimension
=================  =====================  =======================================  ==========
independence       ``{}``                 --                                       any M
gaussian           ``corr`` (M, M)        off-diagonal ``|rho| <= 0.999``          any M
student            ``corr``, ``df``       ``|rho| <= 0.999``, ``2 <= df <= 50``    any M
clayton            ``theta``              ``1e-4 <= theta <= 50``                  any M
gumbel             ``theta``              ``1 <= theta <= 50``                     any M
frank              ``theta``              ``-50..50`` (M = 2), ``1e-4..50``        any M
plackett           ``theta``              ``exp(-10) <= theta <= exp(10)``         M = 2
=================  =====================  =======================================  ==========

Clayton and Gumbel also come rotated by 90, 180 or 270 degrees (bivariate; ``_rot180`` is the
survival copula ``c(1 - u)``, ``_rot90``/``_rot270`` reflect one coordinate and model negative
dependence); the default candidates include the 180-degree rotations. Frank, Plackett and the
elliptical families are radially symmetric and reach negative dependence through their
parameter, so they have no rotations. Frank needs ``theta > 0`` when M > 2.

The Archimedean families (Clayton, Gumbel, Frank) share one form for every mixed derivative
``d^K C / du_K = psi^{(|K|)}(sum_m psi^{-1}(u_m)) prod_{k in K} (psi^{-1})'(u_k)`` through their
generator ``psi``; the generator derivatives are those of Hofert, Maechler & McNeil (2012):
Frank's as a sum of positive terms, Gumbel's polynomial coefficients from (alternating)
Stirling-number sums, which agree with ``copulae`` to 1e-13 up to M = 10. The elliptical
families' mixed derivatives are conditional normal or t distribution functions, available for
at most two interval coordinates per row when M > 2 (:meth:`Copula.supports_intervals`).
"""

from __future__ import annotations

import numpy as np

from .archimedean import ClaytonCopula, FrankCopula, GumbelCopula
from .dependence import RHO_MAX
from .elliptical import GaussianCopula, StudentCopula
from .family import EPS, Copula, clip_unit, registry
from .independence import IndependenceCopula
from .plackett import PlackettCopula, plackett_cdf

__all__ = [
    "EPS",
    "FAMILIES",
    "KNOWN_FAMILIES",
    "BIVARIATE_ONLY",
    "BOUNDS",
    "IndependenceCopula",
    "GaussianCopula",
    "StudentCopula",
    "ClaytonCopula",
    "GumbelCopula",
    "FrankCopula",
    "PlackettCopula",
    "families_for_dimension",
    "parse",
    "make",
    "n_params",
    "clip_unit",
    "log_density",
    "sample",
    "plackett_cdf",
]

# ---------------------------------------------------------------------------------------------
# Names.

#: Every family in the order that breaks ties in selection (simplest first); a class defined
#: in a family module registers itself (:func:`fusion.copula.family.registry`) and must be
#: listed here.
_CLASSES = {
    cls.family: cls
    for cls in (
        IndependenceCopula,
        GaussianCopula,
        StudentCopula,
        ClaytonCopula,
        GumbelCopula,
        FrankCopula,
        PlackettCopula,
    )
}
if set(_CLASSES) != set(registry()):  # pragma: no cover - a new family not listed above
    raise ImportError(f"copula families {sorted(set(registry()) - set(_CLASSES))} are not listed")

#: Default candidate families (``families="all"``), in the order used to break ties in
#: selection (simplest first).
FAMILIES = tuple(cls.name_for(r) for cls in _CLASSES.values() for r in cls.default_rotations)
#: Every accepted family name (the rotations by 90 and 270 degrees included).
KNOWN_FAMILIES = tuple(cls.name_for(r) for cls in _CLASSES.values() for r in cls.rotations)
#: Families defined only for two scores.
BIVARIATE_ONLY = frozenset(
    cls.name_for(r) for cls in _CLASSES.values() for r in cls.rotations if cls.bivariate_only or r
)
#: Parameter bounds used by the maximum-likelihood fits (see the module table).
BOUNDS = {
    "rho": (-RHO_MAX, RHO_MAX),
    "df": StudentCopula.df_bounds,
    "clayton": ClaytonCopula.bounds,
    "gumbel": GumbelCopula.bounds,
    "frank": FrankCopula.bounds,
    "frank_multivariate": FrankCopula.bounds_multivariate,
    "plackett": PlackettCopula.bounds,
}


def parse(name: str) -> tuple[type[Copula], int]:
    """``"gumbel_rot180"`` -> ``(GumbelCopula, 180)``; a clear ValueError for unknown names."""
    if isinstance(name, str):
        base, sep, rot = name.partition("_rot")
        cls = _CLASSES.get(base)
        if cls is not None and (not sep or (rot.isdigit() and int(rot) in cls.rotations[1:])):
            return cls, int(rot) if sep else 0
    raise ValueError(f"unknown copula family {name!r}; known families: {list(KNOWN_FAMILIES)}.")


def make(name: str, dim: int = 2, params: dict | None = None) -> Copula:
    """The copula object for a family name, dimension and (optional) parameters."""
    cls, rotation = parse(name)
    return cls(dim=dim, rotation=rotation, params=params)


def families_for_dimension(M: int) -> tuple[str, ...]:
    """The default candidate families in ``M`` dimensions, in :data:`FAMILIES` order.

    A single variable's only copula is independence (the uniform density).
    """
    if M == 1:
        return ("independence",)
    return tuple(f for f in FAMILIES if M == 2 or f not in BIVARIATE_ONLY)


def n_params(family: str, M: int) -> int:
    """Number of free parameters of a family in ``M`` dimensions (for AIC)."""
    return make(family, M).n_params()


def log_density(family: str, U: np.ndarray, params: dict) -> np.ndarray:
    """Log-density of ``family`` with ``params`` at rows of ``U`` (clipped into the cube).

    Parameters
    ----------
    family : str
        One of :data:`KNOWN_FAMILIES`.
    U : ndarray of shape (n, M)
        Points of ``[0, 1]^M``; clipped into ``[EPS, 1 - EPS]`` here.
    params : dict
        As stored in ``CopulaFusion.copula_params_`` (see the module table).

    Returns
    -------
    ndarray of shape (n,)
    """
    U = np.asarray(U, dtype=float)
    return make(family, U.shape[1], params).logpdf(U)


def sample(family: str, params: dict, n: int, M: int = 2, random_state=None) -> np.ndarray:
    """Draw ``n`` points of ``[0, 1]^M`` from a copula (for simulations and tests).

    Archimedean families use their frailty (Marshall-Olkin) representation, valid in any
    dimension; Plackett uses conditional inversion.

    Parameters
    ----------
    family : str
        One of :data:`KNOWN_FAMILIES`.
    params : dict
        ``{"corr": R}`` (gaussian), ``{"corr": R, "df": nu}`` (student), ``{"theta": t}``
        (the others), ``{}`` (independence). ``R`` must be ``(M, M)``.
    n : int
    M : int, default=2
        Dimension (ignored for the elliptical families, whose ``corr`` fixes it).
    random_state : int, Generator or None

    Returns
    -------
    ndarray of shape (n, M)
    """
    cls, rotation = parse(family)
    dim = np.shape(params["corr"])[0] if "corr" in params else M
    if (cls.bivariate_only or rotation) and dim != 2:
        raise ValueError(f"the {family} copula is bivariate; got M = {dim}.")
    return cls(dim=dim, rotation=rotation, params=params).sample(n, random_state)
