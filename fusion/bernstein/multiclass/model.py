"""The probabilities of a fitted class-shared multi-class model, and the checks of its fitted
state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import comb

from ..._multiclass import COUPLED_LOGIT_RANGE
from ..basis import TINY, evaluate
from .pairs import BLOCK_PAIRS, log_probabilities
from .toplabel import admissible, reweight

__all__ = [
    "shared_proba",
    "shared_proba_terms",
    "shared_proba_normalized",
    "MemberTerms",
    "SharedModel",
]


def _softmax_capped(eta: np.ndarray) -> np.ndarray:
    """Row-wise softmax (in place), every logit first kept within ``COUPLED_LOGIT_RANGE`` of
    its row's largest, so no probability rounds to 0 or 1."""
    top = eta.max(axis=1, keepdims=True)
    np.maximum(eta, top - COUPLED_LOGIT_RANGE, out=eta)
    eta -= top
    np.exp(eta, out=eta)
    eta /= eta.sum(axis=1, keepdims=True)
    return eta


def _eta(Z: np.ndarray, U: np.ndarray, c, coefs, bias) -> np.ndarray:
    """``eta`` (r, C) from the scorers' log-probabilities ``Z`` and normalized values ``U``,
    both (r, M, C), and the class biases."""
    eta = np.zeros((Z.shape[0], Z.shape[2]))
    eta += bias
    for m in range(Z.shape[1]):
        eta += c[m] * Z[:, m]
        eta += evaluate(coefs[m], U[:, m].reshape(-1, 1)).reshape(eta.shape)
    return eta


class MemberTerms:
    """One scorer's part of ``eta``, ``c z + g(F(z))``, at its log-probabilities ``z``:
    ``F`` its normalization (a :class:`fusion.ecdf.KnotLookup`), ``g`` its Bernstein
    polynomial (``coef``). A compiled pass per scorer
    (:func:`.kernels.add_member_terms`, the same operations) where ``F`` is a plain
    piecewise-linear map, else the lookup and :func:`fusion.bernstein.basis.evaluate`."""

    def __init__(self, lookup, coef: np.ndarray, c: float):
        self.lookup, self.coef, self.c = lookup, np.asarray(coef, dtype=float), float(c)
        plain = (
            not lookup.step and lookup.neg_inf is None and lookup.pos_inf is None
            and lookup.width is not None and lookup.knots.shape[0] >= 2
        )  # fmt: skip
        self.compiled = None
        if plain:
            from . import kernels  # numba: imported by the first model that needs it

            K = self.coef.shape[0] - 1
            grid = kernels.segment_lookup(lookup.knots)
            self.compiled = (kernels.add_member_terms, grid, comb(K, np.arange(K + 1)))

    def add(self, eta: np.ndarray, z: np.ndarray) -> None:
        """``eta += c z + g(F(z))`` for one scorer's rows ``z`` (r, C)."""
        if self.compiled is None:
            z = np.asarray(z, dtype=np.float64)
            eta += self.c * z
            eta += evaluate(self.coef, self.lookup(z.ravel()).reshape(-1, 1)).reshape(eta.shape)
            return
        kernel, grid, binom = self.compiled
        lk = self.lookup
        kernel(z, lk.knots, lk.values, lk.width, lk.rise, *grid, self.coef, binom, TINY,
               self.c, eta)  # fmt: skip


def shared_proba_terms(Zs, terms: list[MemberTerms], bias, top=None) -> np.ndarray:
    """Class probabilities (r, C) from every scorer's log-probabilities ``Zs[m]`` (r, C),
    its terms and the class biases (``top``: as :func:`shared_proba`)."""
    eta = np.zeros(Zs[0].shape)
    eta += bias
    for z, term in zip(Zs, terms, strict=True):
        term.add(eta, z)
    P = _softmax_capped(eta)
    return P if top is None else reweight(P, top)


def shared_proba(S: np.ndarray, scales, floors, lookups, c, coefs, bias, top=None) -> np.ndarray:
    """Class probabilities (n, C) of the class-shared model at scores ``S`` (n, M, C), with
    the top-label correction ``top`` (its ``theta``; None or empty: none)."""
    n, M, C = S.shape
    out = np.empty((n, C))
    step = max(1, BLOCK_PAIRS // C)
    terms = [MemberTerms(lookups[m], coefs[m], c[m]) for m in range(M)]
    for start in range(0, n, step):
        rows = slice(start, start + step)
        Zs = [log_probabilities(S[rows, m, :], scales[m], floors[m]) for m in range(M)]
        out[rows] = shared_proba_terms(Zs, terms, bias, top)
    return out


def shared_proba_normalized(Z: np.ndarray, U: np.ndarray, c, coefs, bias, top=None) -> np.ndarray:
    """Class probabilities at log-probabilities ``Z`` and their normalized values ``U``."""
    P = _softmax_capped(_eta(Z, U, c, coefs, bias))
    return P if top is None else reweight(P, top)


@dataclass(frozen=True, eq=False)
class SharedModel:
    """A fitted class-shared model read from the estimator's fitted attributes: the scorers'
    scales and floors, their ECDF lookups, ``c``, every ``g_m``'s coefficients, the class
    biases and the top-label correction's ``theta`` (None: none)."""

    scales: list[str]
    floors: np.ndarray
    lookups: list
    c: np.ndarray
    coefs: list[np.ndarray]
    bias: np.ndarray
    top: np.ndarray | None

    @classmethod
    def of(cls, attrs: dict, lookups: list) -> SharedModel:
        """The model of the fitted attributes ``attrs`` (with the ECDF's ``lookups``), after
        refusing arrays that do not fit together."""
        _check(attrs)
        base = attrs["base_"]
        coef = attrs.get("top_label_coef_")
        # None or all 0: no correction (also a model saved before the correction existed)
        top = None if coef is None or not np.any(coef) else np.asarray(coef[1:], dtype=float)
        return cls(
            ["probability" if b == "logit" else "logit" for b in base],
            attrs["logp_floor_"], lookups, attrs["base_coef_"],
            np.split(attrs["coef_"], len(attrs["degree_"])), attrs["class_bias_"], top,
        )  # fmt: skip

    def proba(self, S: np.ndarray) -> np.ndarray:
        """Class probabilities (n, C) at scores ``S`` (n, M, C)."""
        return shared_proba(
            S, self.scales, self.floors, self.lookups, self.c, self.coefs, self.bias, self.top
        )

    def proba_normalized(self, U: np.ndarray, inverse) -> np.ndarray:
        """Class probabilities at normalized points ``U`` (n, M, C) (``inverse``: the
        scorers' inverse ECDF, back to log-probabilities)."""
        Z = np.empty_like(U)
        for m in range(U.shape[1]):
            Z[:, m] = inverse.column(np.clip(U[:, m], 0.0, 1.0).ravel(), m).reshape(U[:, m].shape)
        return shared_proba_normalized(Z, U, self.c, self.coefs, self.bias, self.top)


def _check(attrs: dict) -> None:
    """Refuse a class-shared model whose fitted arrays do not fit together."""
    M = attrs["n_features_in_"]
    degree = attrs["degree_"]
    K = degree[0] if degree else -1
    problems = []
    if len(degree) != M or len(set(degree)) != 1 or K < 0:
        problems.append(f"degree_ must hold one degree for each of the {M} scorers")
    coef, c = attrs["coef_"], attrs["base_coef_"]
    if not (
        isinstance(coef, np.ndarray) and coef.dtype == np.float64 and coef.shape == (M * (K + 1),)
    ):
        problems.append(f"coef_ must be a float64 array of shape ({M * (K + 1)},)")
    if not (
        isinstance(c, np.ndarray) and c.dtype == np.float64 and c.shape == (M,) and np.all(c >= 0)
    ):
        problems.append(f"base_coef_ must be {M} floats >= 0")
    floor = attrs["logp_floor_"]
    if not (isinstance(floor, np.ndarray) and floor.shape == (M,) and np.all(np.isfinite(floor))):
        problems.append(f"logp_floor_ must be {M} finite floats")
    base = attrs["base_"]
    if len(base) != M or any(b not in ("logit", "identity") for b in base):
        problems.append(f"base_ must hold {M} of 'logit'/'identity'")
    top = attrs.get("top_label_coef_")
    if top is not None and not (
        isinstance(top, np.ndarray)
        and top.ndim == 1
        and top.shape[0] >= 2
        and top[0] == 0.0
        and np.all(np.isfinite(top))
        and admissible(top[1:])
    ):
        problems.append(
            "top_label_coef_ must be a finite array starting with 0 whose correction keeps "
            "the probabilities monotone (see fusion.bernstein.multiclass.toplabel)"
        )
    if problems:
        raise ValueError(
            "BernsteinFusion's fitted state is inconsistent: " + "; ".join(problems) + "."
        )
