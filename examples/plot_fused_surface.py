"""
The fused probability over the normalized square
================================================

Two scorers, correlated as real classifiers are, are fused with
:class:`~fusion.BernsteinFusion`. :func:`fusion.plot.fused_surface` draws the fitted
calibrating function over the square of ECDF-normalized scores (each axis is the quantile
of one score among the training scores) with contours that enclose 50 %, 80 % and 95 % of
the training points. The fused probability rises from the south-west to the north-east,
never decreasing along either axis; where the training points are sparse (the north-west
and south-east corners) it is an extrapolation.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm

from fusion import BernsteinFusion, plot

rng = np.random.default_rng(0)
n = 2000
# Two scores with correlation 0.6 and a known probability of the positive class that is
# monotone in both but not logistic-linear: positives need both scores high.
z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=n)
truth = 0.05 + 0.9 * norm.cdf(1.5 * z[:, 0]) * norm.cdf(1.5 * z[:, 1] - 0.5)
y = (rng.random(n) < truth).astype(int)

model = BernsteinFusion(random_state=0).fit(z, y)

fig, ax = plt.subplots(figsize=(5.2, 4.2), layout="constrained")
plot.fused_surface(
    model,
    z,
    ax=ax,
    title=f"BernsteinFusion, degree {model.degree_}",
    xlabel="scorer A (normalized)",
    ylabel="scorer B (normalized)",
)
if len(sys.argv) > 1:  # python examples/plot_fused_surface.py docs/_static/fused_surface.png
    fig.savefig(sys.argv[1], dpi=90)

# %%
# The same model as labelled contours with the training points coloured by label
# (:func:`fusion.plot.contour`).
ax = plot.contour(model, points=(z[:400], y[:400]), title="Contours and 400 training points")
