"""
Is the fused probability calibrated?
====================================

Calibration is checked on test rows that neither the scorers nor the fusion saw. Two views:

* :func:`fusion.plot.reliability_bands` bins the test rows by predicted probability and
  compares each bin's observed rate of positives with its mean prediction. The band is a
  90 % bootstrap interval over resamples of the test rows: a bin whose band misses the
  diagonal is miscalibrated beyond sampling noise. The histogram underneath shows how many
  rows each bin holds.
* :func:`fusion.plot.grid_calibration_heatmap` bins the test rows by their *scores* instead:
  each cell of the normalized square compares its observed rate with the fused probability
  at the cell centre (the grid metrics of Wang & Liu 2020). A model can be calibrated on
  average per probability bin and still be wrong in a region of the score space; this view
  shows where.

Here two scorers are miscalibrated in opposite ways (one too confident, one too timid); each
alone is off the diagonal, the fused probability is on it.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit

from fusion import BernsteinFusion, metrics, plot

rng = np.random.default_rng(1)
n_fit, n_test = 2000, 20_000
z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=n_fit + n_test)
truth = expit(1.2 * z[:, 0] + 0.9 * z[:, 1] - 0.4)
y = (rng.random(truth.shape[0]) < truth).astype(int)
# What the two scorers report: probabilities on the wrong temperature.
S = np.column_stack([expit(3.0 * z[:, 0]), expit(0.4 * z[:, 1])])
fit, test = slice(0, n_fit), slice(n_fit, None)

model = BernsteinFusion(random_state=0).fit(S[fit], y[fit])
p = model.predict_proba(S[test])[:, 1]

fig, axes = plt.subplots(
    2, 3, figsize=(13, 5.6), height_ratios=(3, 1), sharex=True, layout="constrained"
)
panels = [
    ("scorer 1 (too confident)", S[test, 0]),
    ("scorer 2 (too timid)", S[test, 1]),
    ("fused", p),
]
for j, (name, q) in enumerate(panels):
    ece = metrics.binned_ece(y[test], q)
    plot.reliability_bands(
        y[test], q, ax=axes[0, j], hist_ax=axes[1, j], title=f"{name}: ECE {ece:.3f}"
    )

# %%
# Per-cell calibration of the fused model on the 10 x 10 grid. Values are observed minus
# predicted probability; grey cells hold too few test rows to be shown. How few is too few
# (``min_count``) is chosen from the data: the paper's 1000 when the cells that have that
# many hold at least half of the test rows; here, 20,000 test rows over 100 cells, a smaller
# value (stated in the title) for which they do.
ax = plot.grid_calibration_heatmap(model, S[test], y[test])
print(ax.get_title())
