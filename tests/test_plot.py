"""Tests of fusion/plot.py (matplotlib, Agg backend)."""

from __future__ import annotations

import numpy as np
import pytest

from fusion import BernsteinFusion
from fusion.metrics import reliability_bins, top_label_bins

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
    with pytest.raises(ValueError, match="2 scores"):
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


# -- labels and titles are parameters --------------------------------------------------------


@pytest.fixture(scope="module")
def model_2d():
    S, y, _ = simulate(400, seed=3)
    return BernsteinFusion(degree=3, random_state=0).fit(S, y), S, y


@pytest.fixture(scope="module")
def model_3d():
    rng = np.random.default_rng(4)
    S = rng.normal(size=(400, 3))
    y = (rng.random(400) < 1 / (1 + np.exp(-S @ [1.0, 0.6, 0.3]))).astype(int)
    return BernsteinFusion(degree=2, random_state=0).fit(S, y), S, y


def _labels(ax):
    return ax.get_title(), ax.get_xlabel(), ax.get_ylabel()


def test_contour_takes_labels_and_title(model_2d):
    model, S, y = model_2d
    ax = plot.contour(model, resolution=11, title="T", xlabel="X", ylabel="Y", colorbar_label="C")
    assert _labels(ax) == ("T", "X", "Y")
    assert ax.figure.axes[-1].get_ylabel() == "C"


def test_reliability_diagram_takes_labels_and_string_labels():
    rng = np.random.default_rng(2)
    p = rng.random(500)
    y = np.where(rng.random(500) < p, "spam", "ham")
    ax = plot.reliability_diagram(y, p, pos_label="spam", title="T", xlabel="X", ylabel="Y")
    assert _labels(ax) == ("T", "X", "Y")
    observed, predicted, _ = reliability_bins((y == "spam").astype(int), p)
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), observed)
    with pytest.raises(ValueError, match="pos_label"):
        plot.reliability_diagram(y, p)


# -- fused_surface ---------------------------------------------------------------------------


def test_fused_surface_is_the_calibrating_function_on_the_square(model_2d):
    model, S, _ = model_2d
    ax = plot.fused_surface(model, S, resolution=21, title="T", xlabel="X", ylabel="Y")
    assert _labels(ax) == ("T", "X", "Y")
    (image,) = ax.get_images()
    grid = np.linspace(0, 1, 21)
    u1, u2 = np.meshgrid(grid, grid)
    expected = model.calibrating_function(np.column_stack([u1.ravel(), u2.ravel()]))
    np.testing.assert_allclose(np.asarray(image.get_array()), expected.reshape(21, 21))
    assert image.get_extent() == [0.0, 1.0, 0.0, 1.0]
    # The density regions: filled, and outlined by a line per requested mass, one line
    # style each, explained by the legend (not by labels on the lines, which sat on the
    # frame).
    filled, lines = [c for c in ax.collections if hasattr(c, "levels")]
    assert len(lines.levels) == 3 and not ax.texts
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["50%", "80%", "95%"]
    assert "white lines" in legend.get_title().get_text()
    styles = [h.get_linestyle() for h in legend.legend_handles]
    assert len(set(styles)) == 3
    assert len(ax.figure.axes) == 2  # the colorbar


def test_fused_surface_points_and_no_overlay(model_2d):
    model, S, _ = model_2d
    ax = plot.fused_surface(model, S, density="points", resolution=11, colorbar=False)
    (points,) = [c for c in ax.collections if type(c).__name__ == "PathCollection"]
    np.testing.assert_allclose(points.get_offsets(), model.ecdf_.transform(S))
    ax = plot.fused_surface(model, resolution=11, colorbar=False)
    assert len(ax.collections) == 0 and len(ax.get_images()) == 1
    assert len(ax.figure.axes) == 1


def _gaussian_copula_points(n, rho, rng):
    from scipy.stats import norm

    z = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=n)
    return norm.cdf(z)


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_density_regions_hold_their_share_of_fresh_points(rho):
    from fusion.plot.surface import density_regions

    rng = np.random.default_rng(7)
    U = _gaussian_copula_points(3000, rho, rng)
    grid, dens, levels = density_regions(U, [0.5, 0.8, 0.95], 50)
    assert grid.shape == (50,) and dens.shape == (50, 50)
    assert levels[0] > levels[1] > levels[2] > 0
    fresh = _gaussian_copula_points(20_000, rho, rng)
    cell = np.minimum((fresh * 50).astype(int), 49)
    for mass, level in zip([0.5, 0.8, 0.95], levels, strict=True):
        share = np.mean(dens[cell[:, 1], cell[:, 0]] >= level)
        assert share == pytest.approx(mass, abs=0.04)


def test_density_regions_are_nested_filled_shapes():
    # Two independent scorers: uniform on the square, where the level sets of a density
    # estimate are noise. Each region must be one piece without holes, inside the next.
    from scipy import ndimage

    from fusion.plot.surface import density_regions

    rng = np.random.default_rng(11)
    U = rng.random((2000, 2))
    _, dens, levels = density_regions(U, [0.5, 0.8, 0.95], 60)
    masks = [dens >= level for level in levels]
    for smaller, larger in zip(masks, masks[1:], strict=False):
        assert np.all(larger[smaller])  # the 95 % region contains the 80 % one, ...
    for mask in masks:
        _, pieces = ndimage.label(mask)
        assert pieces == 1
        # No hole: every piece of the complement reaches the edge of the square.
        outside, n_outside = ndimage.label(~mask)
        edge = np.unique(np.concatenate([outside[0], outside[-1], outside[:, 0], outside[:, -1]]))
        assert set(range(1, n_outside + 1)) <= set(edge.tolist())


def test_fused_surface_draws_the_regions_filled_and_outlined(model_2d):
    from fusion.plot.surface import density_regions

    model, S, _ = model_2d
    ax = plot.fused_surface(model, S, resolution=11, colorbar=False)
    _, dens, levels = density_regions(model.ecdf_.transform(S), [0.5, 0.8, 0.95], 60)
    filled, lines = [c for c in ax.collections if hasattr(c, "levels")]
    assert filled.filled and not lines.filled
    np.testing.assert_allclose(lines.levels, np.sort(levels))
    np.testing.assert_allclose(filled.levels[:-1], np.sort(levels))
    assert filled.levels[-1] >= dens.max()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["50%", "80%", "95%"]
    # the legend lies under the square, outside it
    ax.figure.canvas.draw()
    assert ax.get_legend().get_window_extent().y1 < ax.get_window_extent().y0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"density": "hexbin"}, "density must be"),
        ({"density_masses": (0.5, 1.0)}, r"\(0, 1\)"),
        ({"resolution": 1}, "resolution"),
        ({"density": "points", "scores": None}, "needs scores"),
    ],
)
def test_fused_surface_rejects_bad_input(model_2d, kwargs, match):
    model, S, _ = model_2d
    kwargs = {"scores": S, **kwargs}
    with pytest.raises(ValueError, match=match):
        plot.fused_surface(model, **kwargs)


def test_surface_plots_need_a_fitted_two_score_model(model_3d):
    from sklearn.exceptions import NotFittedError

    model, S, y = model_3d
    for draw in (plot.fused_surface, plot.contour):
        with pytest.raises(ValueError, match="2 scores"):
            draw(model)
        with pytest.raises(NotFittedError):
            draw(BernsteinFusion())
        with pytest.raises(ValueError, match="fitted fusion estimator"):
            draw(object())
    with pytest.raises(ValueError, match="2 scores"):
        plot.grid_calibration_heatmap(model, S, y, min_count=1)


# -- slices ----------------------------------------------------------------------------------


def test_slices_draw_one_monotone_curve_per_setting(model_3d):
    model, _, _ = model_3d
    ax = plot.slices(model, vary=1, at=(0.1, 0.5, 0.9), resolution=31, title="T", xlabel="X")
    assert _labels(ax) == ("T", "X", "P(Y = 1 | u)")
    lines = ax.get_lines()
    assert len(lines) == 3
    grid = np.linspace(0, 1, 31)
    for line, q in zip(lines, (0.1, 0.5, 0.9), strict=True):
        U = np.column_stack([np.full(31, q), grid, np.full(31, q)])
        np.testing.assert_allclose(line.get_xdata(), grid)
        np.testing.assert_allclose(line.get_ydata(), model.calibrating_function(U))
        assert np.all(np.diff(line.get_ydata()) >= -1e-9)  # BernsteinFusion is monotone
    # Curves are ordered by the fixed quantiles (monotone in the other scores too).
    assert np.all(lines[0].get_ydata() <= lines[1].get_ydata() + 1e-9)
    assert np.all(lines[1].get_ydata() <= lines[2].get_ydata() + 1e-9)
    assert ax.get_legend().get_title().get_text() == "other scores at quantile"


def test_slices_take_one_quantile_per_other_score(model_3d):
    model, _, _ = model_3d
    ax = plot.slices(model, vary=2, at=[(0.2, 0.7)], resolution=5, legend_title="L")
    (line,) = ax.get_lines()
    U = np.column_stack([np.full(5, 0.2), np.full(5, 0.7), np.linspace(0, 1, 5)])
    np.testing.assert_allclose(line.get_ydata(), model.calibrating_function(U))
    assert ax.get_legend().get_title().get_text() == "L"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"vary": 3}, "vary"),
        ({"vary": -1}, "vary"),
        ({"at": [(0.1, 0.2, 0.3)]}, "2 of them"),
        ({"at": [1.5]}, r"\[0, 1\]"),
        ({"at": []}, "empty"),
    ],
)
def test_slices_reject_bad_input(model_3d, kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot.slices(model_3d[0], **kwargs)


# -- reliability_bands -----------------------------------------------------------------------


def test_reliability_bands_curve_band_and_histogram():
    rng = np.random.default_rng(5)
    p = rng.random(800)
    y = (rng.random(800) < p).astype(int)
    ax = plot.reliability_bands(
        y, p, n_bins=8, n_boot=100, label="m", title="T", xlabel="X", ylabel="Y", hist_ylabel="H"
    )
    assert ax.get_title() == "T" and ax.get_ylabel() == "Y"
    observed, predicted, count = reliability_bins(y, p, n_bins=8)
    curve = [line for line in ax.get_lines() if line.get_label() == "m"][0]
    np.testing.assert_allclose(curve.get_ydata(), observed)
    bands = [c for c in ax.collections if "bootstrap" in str(c.get_label())]
    assert len(bands) == 1
    hist_ax = ax.figure.axes[-1]
    assert hist_ax is not ax and hist_ax.get_xlabel() == "X" and hist_ax.get_ylabel() == "H"
    np.testing.assert_allclose([bar.get_height() for bar in hist_ax.patches], count)
    # Same seed, same band; the band is drawn around the observed rates.
    band = bands[0].get_paths()[0].vertices
    again = plot.reliability_bands(y, p, n_bins=8, n_boot=100, histogram=False)
    assert len(again.figure.axes) == 1 and again.get_xlabel() == "mean predicted probability"
    again_band = [c for c in again.collections if "bootstrap" in str(c.get_label())][0]
    np.testing.assert_array_equal(again_band.get_paths()[0].vertices, band)


def test_reliability_bands_quantile_bins_and_shared_histogram():
    rng = np.random.default_rng(6)
    p = rng.beta(2, 5, 600)
    y = np.where(rng.random(600) < p, "yes", "no")
    fig, (ax, hist_ax) = plt.subplots(2, 1)
    plot.reliability_bands(
        y, p, pos_label="yes", strategy="quantile", n_bins=5, ax=ax, hist_ax=hist_ax, n_boot=50
    )
    plot.reliability_bands(
        y, p**0.5, pos_label="yes", strategy="quantile", n_bins=5, ax=ax, hist_ax=hist_ax, n_boot=50
    )
    assert len(fig.axes) == 2 and len(hist_ax.patches) == 10
    assert sum(line.get_label() == "perfectly calibrated" for line in ax.get_lines()) == 1


def test_bootstrap_band_equals_resampling_the_rows():
    # The per-cell multinomial draw must give the same band as resampling rows directly.
    from fusion.metrics.binned import bin_ids
    from fusion.plot.reliability import _bootstrap_rates

    rng = np.random.default_rng(8)
    p = rng.random(300)
    y = (rng.random(300) < p**1.3).astype(int)
    ids = bin_ids(p, 5, "uniform")
    totals = np.bincount(ids, minlength=5)
    positives = np.bincount(ids, weights=y, minlength=5).astype(int)
    lower, upper = _bootstrap_rates(positives, totals, 4000, 0.9, 0)
    rows = rng.integers(0, 300, size=(4000, 300))
    tot = np.stack([np.bincount(ids[r], minlength=5) for r in rows])
    pos = np.stack([np.bincount(ids[r], weights=y[r], minlength=5) for r in rows])
    ref_lower, ref_upper = np.quantile(pos / tot, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(lower, ref_lower, atol=0.03)
    np.testing.assert_allclose(upper, ref_upper, atol=0.03)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_boot": 0}, "n_boot"),
        ({"confidence": 1.0}, "confidence"),
        ({"strategy": "kmeans"}, "strategy"),
        ({"n_bins": 2.5}, "n_bins"),
    ],
)
def test_reliability_bands_reject_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot.reliability_bands([0, 1, 1], [0.2, 0.6, 0.9], **kwargs)


# -- grid_calibration_heatmap ----------------------------------------------------------------


def test_grid_heatmap_shows_the_table(model_2d):
    from fusion.metrics import grid_calibration_table

    model, S, y = model_2d
    table = grid_calibration_table(model, S, y, bins=4, min_count=15)
    ax = plot.grid_calibration_heatmap(model, S, y, bins=4, min_count=15, xlabel="X", ylabel="Y")
    assert ax.get_xlabel() == "X" and ax.get_ylabel() == "Y"
    assert f"{table.ece:.3f}" in ax.get_title()
    (image,) = ax.get_images()
    shown = np.ma.filled(image.get_array(), np.nan)
    expected = np.full((4, 4), np.nan)
    expected[table.cells[:, 1], table.cells[:, 0]] = table.observed - table.predicted
    np.testing.assert_allclose(shown, expected)
    assert len(ax.texts) == table.n_kept
    ax = plot.grid_calibration_heatmap(
        model, S, y, bins=4, min_count=15, signed=False, annotate=False, title="T"
    )
    assert ax.get_title() == "T" and len(ax.texts) == 0
    assert np.nanmin(np.ma.filled(ax.get_images()[0].get_array(), np.nan)) >= 0
    with pytest.raises(ValueError, match="no grid cell"):
        plot.grid_calibration_heatmap(model, S, y, bins=4, min_count=10_000)


@pytest.fixture(scope="module")
def independent_19000():
    """A model of two independent scorers and 19,000 test rows (about 190 per grid cell)."""
    rng = np.random.default_rng(12)
    S = rng.normal(size=(19_500, 2))
    y = (rng.random(19_500) < 1 / (1 + np.exp(-2 * S[:, 0] - S[:, 1] ** 3))).astype(int)
    model = BernsteinFusion(degree=3, random_state=0).fit(S[:500], y[:500])
    return model, S[500:], y[500:]


def _pixel_boxes(texts):
    return np.array([t.get_window_extent().extents for t in texts])  # x0, y0, x1, y1


def test_grid_heatmap_defaults_work_on_19000_rows(independent_19000):
    model, S, y = independent_19000
    ax = plot.grid_calibration_heatmap(model, S, y)
    assert "at least 100 rows" in ax.get_title()  # the paper's 1000 would show no cell
    assert len(ax.texts) >= 90 and f"\n{len(ax.texts)} cells" in ax.get_title()
    ax.figure.canvas.draw()
    boxes = _pixel_boxes(ax.texts)
    x0, y0, x1, y1 = (boxes[:, k] for k in range(4))
    overlap = (
        (x0[:, None] < x1[None, :])
        & (x0[None, :] < x1[:, None])
        & (y0[:, None] < y1[None, :])
        & (y0[None, :] < y1[:, None])
    )
    np.fill_diagonal(overlap, False)
    assert not overlap.any()
    # Each value stays inside its own cell.
    axes_box = ax.get_window_extent()
    cell = axes_box.width / 10
    centres = np.column_stack([(x0 + x1) / 2, (y0 + y1) / 2])
    column = np.floor((centres[:, 0] - axes_box.x0) / cell)
    assert np.all(x0 >= axes_box.x0 + column * cell) and np.all(
        x1 <= axes_box.x0 + (column + 1) * cell
    )
    assert min(t.get_fontsize() for t in ax.texts) >= 5


def test_grid_heatmap_leaves_out_annotations_that_would_not_fit(independent_19000):
    model, S, y = independent_19000
    ax = plot.grid_calibration_heatmap(model, S, y, bins=20, min_count=20)
    assert len(ax.texts) == 0
    ax = plot.grid_calibration_heatmap(model, S, y, bins=20, min_count=20, annotate=True)
    assert len(ax.texts) > 0
    with pytest.raises(ValueError, match="annotate"):
        plot.grid_calibration_heatmap(model, S, y, annotate="yes")


def test_choose_min_count_keeps_the_papers_value_when_the_data_allow():
    from fusion.plot.grid import choose_min_count

    # Correlated scorers on many rows: big cells along the diagonal hold most rows.
    assert choose_min_count([4000] * 10 + [300] * 40, 52_000) == 1000
    assert choose_min_count([190] * 100, 19_000) == 100
    assert choose_min_count([1200] * 2 + [60] * 98, 8280) == 50
    with pytest.raises(ValueError, match="min_count="):
        choose_min_count([3] * 100, 300)


def _figures_with_defaults(model_2d, model_3d):
    model, S, y = model_2d
    model3, _, _ = model_3d
    p = model.predict_proba(S)[:, 1]
    rng = np.random.default_rng(13)
    P = rng.dirichlet(np.ones(3), size=300)
    labels = (rng.random((300, 1)) > np.cumsum(P, 1)).sum(1)
    p20k = rng.random(20_000)
    y20k = (rng.random(20_000) < p20k).astype(int)
    return {
        "fused_surface": lambda: plot.fused_surface(model, S),
        "contour": lambda: plot.contour(model, points=(S, y)),
        "slices": lambda: plot.slices(model3),
        "reliability_diagram": lambda: plot.reliability_diagram(y, p, label="m"),
        # Thousands of rows per bin: wide tick labels on the histogram.
        "reliability_bands": lambda: plot.reliability_bands(y20k, p20k, label="m", title="T"),
        "grid_calibration_heatmap": lambda: plot.grid_calibration_heatmap(model, S, y, bins=4),
        "top_label_reliability_diagram": lambda: plot.top_label_reliability_diagram(labels, P),
    }


@pytest.mark.parametrize(
    "name",
    [
        "fused_surface",
        "contour",
        "slices",
        "reliability_diagram",
        "reliability_bands",
        "grid_calibration_heatmap",
        "top_label_reliability_diagram",
    ],
)
def test_no_text_is_clipped_by_the_figure(name, model_2d, model_3d):
    from matplotlib.text import Text

    ax = _figures_with_defaults(model_2d, model_3d)[name]()
    figure = ax.figure
    figure.canvas.draw()
    inside = figure.bbox.padded(1.0)
    texts = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert ax.get_ylabel() in [t.get_text() for t in texts]  # the labels are among them
    outside = [
        t.get_text()
        for t in texts
        if not inside.contains(*t.get_window_extent().p0)
        or not inside.contains(*t.get_window_extent().p1)
    ]
    assert outside == []


# -- top-label reliability -------------------------------------------------------------------


def test_top_label_reliability_diagram_plots_the_bins():
    rng = np.random.default_rng(9)
    logits = rng.normal(size=(600, 4))
    P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    y = np.array(["cat", "cow", "dog", "emu"])[(rng.random((600, 1)) > np.cumsum(P, 1)).sum(1)]
    ax = plot.top_label_reliability_diagram(y, P, n_bins=10, label="m", title="T", ylabel="Y")
    assert _labels(ax) == ("T", "confidence (largest class probability)", "Y")
    accuracy, confidence, count = top_label_bins(y, P, n_bins=10)
    curve = [line for line in ax.get_lines() if line.get_label() == "m"][0]
    joined = count >= 10  # the default min_count
    np.testing.assert_allclose(curve.get_xdata(), confidence[joined])
    np.testing.assert_allclose(curve.get_ydata(), accuracy[joined])
    markers = np.vstack([c.get_offsets() for c in ax.collections])
    assert markers.shape[0] == count.shape[0]
    with pytest.raises(ValueError, match=r"\(n, C\)"):
        plot.top_label_reliability_diagram(y, P[:, 0])
    with pytest.raises(ValueError, match="labels="):
        plot.top_label_reliability_diagram(y[y != "emu"], P[y != "emu"])


def test_sparse_bins_are_hollow_and_off_the_curve():
    # 2,000 rows of moderate confidence and 3 at the top, all right: their bin's accuracy
    # of 1.0 on 3 rows must not pull the curve
    rng = np.random.default_rng(21)
    P = rng.dirichlet([4, 4, 4], size=2003)
    P[-3:] = [0.98, 0.01, 0.01]
    y = np.array([int(np.argmax(row)) for row in P])
    y[:2000:2] = (y[:2000:2] + 1) % 3  # half of the bulk wrong
    ax = plot.top_label_reliability_diagram(y, P, n_bins=10)
    accuracy, confidence, count = top_label_bins(y, P, n_bins=10)
    curve = ax.get_lines()[1]
    enough = count >= 10
    np.testing.assert_allclose(curve.get_xdata(), confidence[enough])
    hollow = [c for c in ax.collections if len(c.get_facecolor()) == 0]
    assert len(hollow) == 1
    np.testing.assert_allclose(
        hollow[0].get_offsets(), np.column_stack([confidence, accuracy])[~enough]
    )
    notes = [t.get_text() for t in ax.get_legend().get_texts()]
    assert notes == ["marker area: rows in the bin", "fewer than 10 rows (hollow, not joined)"]
    # min_count=1 joins every bin
    ax = plot.top_label_reliability_diagram(y, P, n_bins=10, min_count=1, show_counts=False)
    assert ax.get_lines()[1].get_xdata().shape == confidence.shape and ax.get_legend() is None


def test_the_legend_explains_the_markers_once_for_several_curves():
    rng = np.random.default_rng(22)
    p = rng.random(3000)
    y = (rng.random(3000) < p).astype(int)
    fig, ax = plt.subplots()
    plot.reliability_diagram(y, p, ax=ax, label="a")
    plot.reliability_diagram(y, p**3, ax=ax, label="b")
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts.count("marker area: rows in the bin") == 1
    assert texts[:2] == ["a", "b"]


def test_contour_draws_at_most_max_points_under_its_labels(model_2d):
    model, S, y = model_2d
    ax = plot.contour(model, points=(S, y), max_points=100)
    scatters = [c for c in ax.collections if type(c).__name__ == "PathCollection"]
    assert sum(c.get_offsets().shape[0] for c in scatters) == 100
    assert ax.get_legend().get_title().get_text() == "100 of 400 points (random)"
    assert all(t.get_zorder() > max(c.get_zorder() for c in scatters) for t in ax.texts)
    # each label sits where its line is farthest from the frame (the default put them on it)
    (lines,) = [c for c in ax.collections if hasattr(c, "levels") and not c.filled]
    for t in ax.texts:
        (k,) = np.flatnonzero(np.isclose(lines.levels, float(t.get_text())))
        v = np.concatenate([s for s in lines.allsegs[k] if len(s)])
        inside = np.minimum(np.minimum(v[:, 0], 1 - v[:, 0]), np.minimum(v[:, 1], 1 - v[:, 1]))
        x, u = t.get_position()
        assert min(x, 1 - x, u, 1 - u) >= inside.max() - 0.02
    ax.figure.canvas.draw()
    assert ax.get_legend().get_window_extent().y1 < ax.get_window_extent().y0
