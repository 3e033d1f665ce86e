"""fusion/_progress.py: progress reporting and the slow-fit warning."""

import warnings

import pytest

from fusion._progress import SLOW_SECONDS, progress, warn_if_slow


def test_progress_yields_every_item_silently_unless_verbose(capsys):
    assert list(progress(range(5), total=5, desc="x")) == list(range(5))
    assert capsys.readouterr().err == ""
    assert list(progress(iter(range(3)), total=3, desc="folds", verbose=True)) == [0, 1, 2]
    assert "folds" in capsys.readouterr().err


def test_slow_fits_warn_once_with_the_estimate_and_advice():
    with pytest.warns(UserWarning, match=r"about 3 minute\(s\) \(180 s\)\. Use fewer\."):
        warn_if_slow(180.0, "the fit", "Use fewer.")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_slow(SLOW_SECONDS - 1, "the fit", "Use fewer.")
