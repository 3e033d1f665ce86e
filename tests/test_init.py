"""The top-level namespace: ``fusion.plot`` and ``fusion.datasets`` load on first access."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import fusion


def run_fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_subpackages_load_on_first_access_without_matplotlib_at_import():
    pytest.importorskip("matplotlib")
    result = run_fresh(
        """
        import sys

        import fusion

        assert "matplotlib" not in sys.modules, "import fusion imported matplotlib"
        assert "fusion.plot" not in sys.modules and "fusion.datasets" not in sys.modules
        assert {"plot", "datasets", "metrics"} <= set(dir(fusion))
        assert callable(fusion.plot.fused_surface) and callable(fusion.plot.reliability_bands)
        assert "matplotlib" not in sys.modules, "fusion.plot imported matplotlib"
        assert callable(fusion.datasets.load) and callable(fusion.metrics.brier_score)
        assert fusion.plot is sys.modules["fusion.plot"]
        import matplotlib

        matplotlib.use("Agg")
        import numpy as np

        ax = fusion.plot.reliability_diagram([0, 1, 1, 0], np.array([0.2, 0.7, 0.9, 0.4]))
        assert "matplotlib" in sys.modules and ax.get_xlim() == (0.0, 1.0)
        """
    )
    assert result.returncode == 0, result.stderr


def test_unknown_attributes_still_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'plots'"):
        fusion.plots  # noqa: B018 - the access is the test


def test_every_public_name_resolves():
    for name in fusion.__all__:
        assert getattr(fusion, name) is not None, name
    assert {"plot", "datasets", "metrics", "FusionClassifier", "load"} <= set(fusion.__all__)
