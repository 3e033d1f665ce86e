"""
Slices of a fusion of three scores
==================================

With three or more scores the calibrating function cannot be drawn whole.
:func:`fusion.plot.slices` draws it along one score while the others are held at chosen
quantiles of their training distribution. For a monotone method every curve rises, and
curves for higher quantiles of the other scores lie above those for lower ones.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm

from fusion import BernsteinFusion, plot

rng = np.random.default_rng(2)
n = 3000
cov = np.full((3, 3), 0.4) + 0.6 * np.eye(3)
z = rng.multivariate_normal(np.zeros(3), cov, size=n)
# Score 2's effect saturates, score 1's does not, score 3 matters little.
truth = norm.cdf(0.8 * z[:, 0] + np.tanh(1.5 * z[:, 1]) + 0.2 * z[:, 2])
y = (rng.random(n) < truth).astype(int)

# Degrees up to 6 per axis keep this example to a fraction of a second (the default grid
# goes to 10, a QP in up to 11**3 coefficients).
model = BernsteinFusion(degree_grid=range(1, 7), random_state=0).fit(z, y)
print(f"degree chosen by cross-validation: {model.degree_}")

fig, axes = plt.subplots(1, 3, figsize=(13, 4), layout="constrained", sharey=True)
for j, ax in enumerate(axes):
    plot.slices(
        model,
        vary=j,
        at=(0.1, 0.25, 0.5, 0.75, 0.9),
        ax=ax,
        title=f"along score {j + 1}",
        ylabel="fused probability" if j == 0 else "",
    )

# %%
# A single setting can fix each other score at its own quantile: here score 1 varies, score
# 2 is held at its 20 % quantile and score 3 at its 80 % quantile, and vice versa.
ax = plot.slices(model, vary=0, at=[(0.2, 0.8), (0.8, 0.2)], legend_title="scores 2, 3 at")
