"""
Three calibrating functions on SUSY (the paper's Figure 1)
==========================================================

Wang & Liu (2020, Sec. 5.1): 200 random rows of SUSY train two feed-forward networks
(hidden sizes 10 and 20); 400 other rows fit MR-MIC (lambda = 1e-5), CopulaFusion and
BernsteinFusion (degree 5 per axis). Panel (a) shows those 400 calibration samples on the
normalized square, panels (b)-(d) the three calibrating functions. Only BernsteinFusion is
non-decreasing in both scores everywhere: MR-MIC is monotone only at the training points,
and CopulaFusion's Bayes rule need not be monotone at all.

SUSY is read from a local copy (``FUSION_DATA_DIR``, see :mod:`fusion.datasets`); without
one, generated scores of two correlated networks stand in for it.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

import fusion
from fusion.plot import contour

rng = np.random.default_rng(0)
try:
    from fusion.bench.protocol import make_scorer, mlp_logit
    from fusion.datasets import load_susy

    data = load_susy(download_if_missing=False)
    perm = rng.permutation(data.y.shape[0])
    train, calib = perm[:200], perm[200:600]
    scores = []
    for hidden in (10, 20):
        scorer = make_scorer([], list(data.X.columns), hidden, random_state=0)
        with warnings.catch_warnings():
            # The paper's small networks stop at their iteration cap; that is the protocol.
            warnings.simplefilter("ignore", ConvergenceWarning)
            scorer.fit(data.X.iloc[train], data.y[train])
        scores.append(mlp_logit(scorer, data.X.iloc[calib]))
    S, y = np.column_stack(scores), data.y[calib]
    source = "SUSY"
except (fusion.datasets.DatasetNotFoundError, ImportError):
    S = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], size=400)
    y = (rng.random(400) < expit(S[:, 0] + S[:, 1])).astype(int)
    source = "generated scores"

models = {
    "(b) MR-MIC, λ = 1e-5": ("mrmic", {"lam": 1e-5}),
    "(c) CopulaFusion": ("copula", {}),
    "(d) BernsteinFusion, K = 5": ("bernstein", {"degree": 5}),
}
fig, axes = plt.subplots(2, 2, figsize=(9, 8.4), layout="constrained")
axes = axes.ravel()
U = fusion.ECDFNormalizer().fit(S).transform(S)
axes[0].scatter(U[y == 0, 0], U[y == 0, 1], s=8, c="tab:blue", label="background (0)")
axes[0].scatter(U[y == 1, 0], U[y == 1, 1], s=8, c="tab:red", marker="^", label="signal (1)")
axes[0].set(
    xlim=(0, 1),
    ylim=(0, 1),
    aspect="equal",
    title=f"(a) 400 calibration samples, {source}",
    xlabel="normalized score 1 (10 hidden)",
    ylabel="normalized score 2 (20 hidden)",
)
axes[0].legend(loc="upper left", fontsize=8)
for ax, (title, (method, params)) in zip(axes[1:], models.items(), strict=True):
    model = fusion.fit(S, y, method=method, **params)
    contour(model, ax=ax, title=title, colorbar=ax is axes[-1])
