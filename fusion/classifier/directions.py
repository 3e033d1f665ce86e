"""The direction of each score given the others (``increasing="conditional"``, the default
of :class:`~fusion.classifier.FusionClassifier`).

A base classifier's score can carry information *against* the label once the other scores are
known: a naive Bayes or linear model beside a gradient-boosted model that already explains
their signal, whose errors then point the other way. Stacking's logistic regression gives such
a score a negative weight; a fusion that is non-decreasing in every score cannot, and loses
(issue 23). :func:`conditional_directions` fits one logistic regression on all the scores,
each on its own scale, and reverses a score only where its weight is *significantly*
negative (Wald z below :data:`~fusion._direction.DIRECTION_Z`, the one-sided p < 0.001 of
``increasing="auto"``; issue 28): the sign of a weight that is noise, or of one of two
redundant scores that share a positive effect, is left alone. The fusion is then monotone
in every score, in the direction the others leave it.

Why a Wald test rather than a cross-validated comparison of the two fusions: it costs one
logistic fit on the out-of-fold scores (the fusion is fitted once), and its standard error
grows with the correlation between the scores, which is what keeps a redundant but positive
score from being reversed by the sampling noise of a near-collinear fit.

A plain function on arrays; :class:`~fusion.classifier.FusionClassifier` calls it on the
out-of-fold scores.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from .._direction import DIRECTION_Z
from ..bernstein.scale import transform_scores

__all__ = ["own_scale_features", "conditional_z", "conditional_directions"]

#: Inverse ridge strength of the direction fit, on standardized features: the weak penalty of
#: ``LogisticRegression(C=10)``, enough to keep a separating score's weight finite.
RIDGE_C = 10.0


def own_scale_features(S: np.ndarray) -> np.ndarray:
    """Every score column on its own scale, standardized: the logit of a column whose values
    all lie in ``[0, 1]`` (a probability), the raw value otherwise; then centred at its
    median and divided by its interquartile range (its standard deviation when that is 0,
    1 when both are). Non-finite values are clipped to the column's finite range."""
    S = np.asarray(S, dtype=float)
    Z = np.empty_like(S)
    for j in range(S.shape[1]):
        col = S[:, j]
        finite = col[np.isfinite(col)]
        if finite.size == 0:
            Z[:, j] = 0.0
            continue
        if finite.min() >= 0.0 and finite.max() <= 1.0:
            # the default fusion model's logit, clipped so a saturated score stays finite
            z = transform_scores(np.nan_to_num(col, nan=0.5), "logit")
        else:
            z = np.clip(np.nan_to_num(col, nan=np.median(finite)), finite.min(), finite.max())
        q25, q50, q75 = np.percentile(z, [25, 50, 75])
        scale = q75 - q25
        if not scale > 0:
            scale = z.std()
        Z[:, j] = (z - q50) / (scale if scale > 0 else 1.0)
    return Z


def conditional_z(
    S: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Wald z statistic of every score's weight in one logistic regression on all of them.

    The regression runs on :func:`own_scale_features` (ridge ``1 / RIDGE_C``, as
    :class:`~sklearn.linear_model.LogisticRegression` with ``C=RIDGE_C``); the standard
    errors are the square roots of the diagonal of the inverse penalized Fisher information
    at the fit. Weights are rescaled to sum to Kish's effective sample size
    ``(sum w)^2 / sum w^2`` (as :func:`fusion._direction.anti_alignment_z`), so scaling them
    changes nothing and unequal weights count as fewer rows.

    Parameters
    ----------
    S : ndarray of shape (n, M)
        Binary scores (probabilities of the positive class or decision functions).
    y : ndarray of shape (n,)
        Labels in ``{0, 1}``.
    sample_weight : ndarray of shape (n,), optional
        Row weights.

    Returns
    -------
    ndarray of shape (M,)
        ``coef / se`` per score: negative where the score points against the label given
        the others; approximately standard normal for a score that carries no information
        beyond the others.
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError(f"S must have shape (n, M), got {S.shape}.")
    y = np.asarray(y)
    if sample_weight is None:
        w = np.ones(S.shape[0])
    else:
        w = np.asarray(sample_weight, dtype=float)
        kept = w > 0
        S, y, w = S[kept], y[kept], w[kept]
        w = w * (w.sum() / np.dot(w, w))  # sum(w) = Kish's effective sample size
    Z = own_scale_features(S)
    model = LogisticRegression(C=RIDGE_C, max_iter=1000)
    model.fit(Z, y, sample_weight=w)
    p = model.predict_proba(Z)[:, 1]
    X = np.column_stack([np.ones(Z.shape[0]), Z])
    info = (X * (w * p * (1.0 - p))[:, None]).T @ X
    info[1:, 1:] += np.eye(Z.shape[1]) / RIDGE_C  # the ridge (the intercept is free)
    cov = np.linalg.pinv(info)
    se = np.sqrt(np.maximum(np.diag(cov)[1:], 0.0))
    coef = model.coef_[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, coef / np.where(se > 0, se, 1.0), 0.0)
    return z


def conditional_directions(
    S: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    threshold: float = DIRECTION_Z,
) -> np.ndarray:
    """Whether each score is used as given: False only where its weight in a logistic
    regression on all the scores is significantly negative (:func:`conditional_z` below
    ``threshold``).

    Parameters
    ----------
    S : ndarray of shape (n, M)
        Binary scores (probabilities of the positive class or decision functions).
    y : ndarray of shape (n,)
        Labels in ``{0, 1}``.
    sample_weight : ndarray of shape (n,), optional
        Row weights.
    threshold : float, default=DIRECTION_Z
        A score is reversed where its Wald z is below this: -3.09, one-sided p < 0.001, the
        threshold of ``increasing="auto"``. ``0`` reverses every negative weight (the sign
        alone; issue 23's rule, which reversed noise).

    Returns
    -------
    ndarray of bool of shape (M,)
        True where the score is used as given, False where it is used reversed. A single
        score is reversed only when it is significantly anti-aligned with the label on its
        own.
    """
    return conditional_z(S, y, sample_weight) >= threshold
