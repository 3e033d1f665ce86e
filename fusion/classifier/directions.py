"""The direction of each base estimator's score given the others (``increasing="conditional"``).

A base classifier's score can carry information *against* the label once the other scores are
known: a naive Bayes or linear model beside a gradient-boosted model that already explains
their signal, whose errors then point the other way. Stacking's logistic regression gives such
a score a negative weight; a fusion that is non-decreasing in every score cannot, and loses
(issue 23). :func:`conditional_directions` takes the direction of every score from the sign of
its weight in one logistic regression on all the scores, each on its own scale; the fusion is
then monotone in every score in that direction.

A plain function on arrays; :class:`~fusion.classifier.FusionClassifier` calls it on the
out-of-fold scores.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from ..bernstein.scale import transform_scores

__all__ = ["own_scale_features", "conditional_directions"]

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


def conditional_directions(
    S: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Whether each score's weight is non-negative in a logistic regression on all of them.

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
    ndarray of bool of shape (M,)
        True where the weight is ``>= 0`` (the score is used as given), False where it is
        negative (the score is used reversed). A single score gets the sign of its own
        association with the label.
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError(f"S must have shape (n, M), got {S.shape}.")
    Z = own_scale_features(S)
    model = LogisticRegression(C=RIDGE_C, max_iter=1000)
    model.fit(Z, np.asarray(y), sample_weight=sample_weight)
    return model.coef_[0] >= 0.0
