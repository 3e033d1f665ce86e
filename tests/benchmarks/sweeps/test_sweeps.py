"""The random-configuration sweeps and the small-sample benchmark: their checks catch what
they are meant to catch, on a few small configurations."""

from __future__ import annotations

import numpy as np
import sweep_binary_conventions as binary
import sweep_multiclass_configs as multiclass
import sweep_random_configs as configs
from bench_small_samples import run_cell

import fusion


def _binary_config(seed: int, **overrides):
    rng = np.random.default_rng(seed)
    n = 300
    z = rng.normal(size=n)
    y = (z + rng.logistic(size=n) > 0).astype(int)
    S = np.c_[z + rng.normal(size=n), 0.5 * z + rng.normal(size=n)]
    cfg = dict(n=n, M=2, S=S, y=y, quirk="none", kind="raw", w=None, missing=False,
               labels="int")  # fmt: skip
    cfg.update(overrides)
    return cfg, rng


def test_the_binary_sweep_passes_a_sound_fit_and_flags_a_broken_convention(monkeypatch):
    w = np.random.default_rng(1).exponential(size=300) * (np.arange(300) % 7 > 0)
    cfg, rng = _binary_config(0, w=w, labels="str")
    assert binary.trial(cfg, rng) == []
    # a fit that read weights as counts of an unnormalized sum would differ when scaled
    fit = fusion.fit

    def scaled_badly(S, y, sample_weight=None, **kw):
        if sample_weight is not None and sample_weight.max() > 5 * w.max():
            return fit(S, y, **kw)  # the weights ignored
        return fit(S, y, sample_weight=sample_weight, **kw)

    monkeypatch.setattr(binary.fusion, "fit", scaled_badly)
    cfg, rng = _binary_config(0, w=w)
    assert any("weights x 7.3" in p for p in binary.trial(cfg, rng))


def test_the_binary_sweep_expects_a_clearly_reversed_score_read_back():
    cfg, rng = _binary_config(2, quirk="reversed")
    cfg["S"][:, 0] = -cfg["S"][:, 0]
    assert binary.trial(cfg, rng) == []  # auto reverses it


def test_the_multiclass_sweep_checks_weights_on_a_small_trial():
    for t in range(40):  # the first weighted trial of seed 5 with few rows
        rng = np.random.default_rng([5, t])
        cfg = multiclass.draw(rng)
        if cfg["w"] is not None and cfg["n"] <= 400 and cfg["C"] <= 20:
            break
    problems = multiclass.trial(cfg, rng)
    assert problems == [] or problems[0].startswith("refused"), problems


def test_the_small_sample_cell_reports_both_contenders():
    row = run_cell(40, 2, 0)
    assert 0.3 < row["default"] < 1.0 and 0.3 < row["stacking"] < 1.0
    assert row["fit_s"] > 0 and row["n"] == 40


class _Scores:
    """A fitted-model stand-in whose P(y = 1) is ``f`` of the two scores."""

    increasing_ = np.array([True, True])

    def __init__(self, f):
        self.f = f

    def predict_proba(self, X):
        p = self.f(np.asarray(X, dtype=float))
        return np.c_[1 - p, p]


def test_the_random_sweep_allows_rounding_but_not_a_decrease(monkeypatch):
    rng = np.random.default_rng(0)
    S, y = rng.normal(size=(60, 2)), np.arange(60) % 2

    def fitted(f):
        monkeypatch.setattr(configs.fusion, "fit", lambda *a, **k: _Scores(f))
        return configs.check(S, y, None, "bernstein")

    def flat_with_noise(X):  # flat in the first score: an ulp down at some points
        return 0.5 + 0.1 * np.tanh(X[:, 1]) - 4e-16 * (X[:, 0] > 0.1)

    assert fitted(flat_with_noise) is None
    assert "not monotone" in fitted(lambda X: 0.5 + 0.1 * np.tanh(X[:, 1] - X[:, 0] ** 2))
