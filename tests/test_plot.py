"""Tests of fusion/plot.py (matplotlib, Agg backend)."""

from __future__ import annotations

import numpy as np
import pytest

from fusion import BernsteinFusion
from fusion.metrics import reliability_bins

from .conftest import simulate

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")
plot = pytest.importorskip("fusion.plot")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_contour_draws_the_calibrating_function_on_the_unit_square():
    S, y, _ = simulate(300, seed=0)
    model = BernsteinFusion(degree=3).fit(S, y)
    ax = plot.contour(model, points=(S, y), resolution=21)
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.0)
    assert ax.get_title() == "BernsteinFusion"
    # The filled contour's levels span the probability range of the fitted function.
    filled = [c for c in ax.collections if hasattr(c, "levels")][0]
    assert filled.levels[0] == 0.0 and filled.levels[-1] == 1.0
    # The overlaid points are the normalized training scores.
    scatters = [c for c in ax.collections if type(c).__name__ == "PathCollection"]
    offsets = np.vstack([c.get_offsets() for c in scatters])
    assert offsets.shape[0] == 300 and offsets.min() > 0 and offsets.max() < 1


def test_contour_needs_two_scores():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(200, 3))
    y = (S.sum(1) > 0).astype(int)
    model = BernsteinFusion(degree=1).fit(S, y)
    with pytest.raises(ValueError, match="two scores"):
        plot.contour(model)


def test_reliability_diagram_plots_the_bins():
    rng = np.random.default_rng(1)
    p = rng.random(2000)
    y = (rng.random(2000) < p).astype(int)
    fig, ax = plt.subplots()
    out = plot.reliability_diagram(y, p, ax=ax, label="model")
    assert out is ax
    observed, predicted, _ = reliability_bins(y, p, n_bins=10)
    curve = [line for line in ax.get_lines() if line.get_label() == "model"][0]
    np.testing.assert_allclose(curve.get_xdata(), predicted)
    np.testing.assert_allclose(curve.get_ydata(), observed)
    plot.reliability_diagram(y, p**2, ax=ax, label="other")  # diagonal drawn once
    assert sum(line.get_label() == "perfectly calibrated" for line in ax.get_lines()) == 1
