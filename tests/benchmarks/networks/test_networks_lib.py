"""Tests of benchmarks/networks_lib on small generated networks (no data files, no torch)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from networks_lib import contenders as con
from networks_lib import report
from networks_lib.data import (
    Case,
    NetworkDataNotFoundError,
    Split,
    data_dir,
    load_split,
    resplit,
)
from networks_lib.runner import run
from scipy.special import log_softmax, softmax


def network(n: int, C: int, factors, seed: int):
    """Labels from ``softmax(z)`` and members' logits ``f z`` (one per factor)."""
    rng = np.random.default_rng(seed)
    z = 1.5 * rng.normal(size=(n, C))
    u = rng.random(n)[:, None]
    y = np.minimum((u > np.cumsum(softmax(z, axis=1), axis=1)).sum(axis=1), C - 1)
    return np.stack([f * z for f in factors], axis=1), y


def nll(P, y):
    return float(-np.mean(np.log(P[np.arange(y.shape[0]), y])))


def test_members_are_read_as_probabilities_or_logits():
    L, _ = network(50, 4, [1.0], seed=0)
    logits = L[:, 0]
    P = softmax(logits, axis=1).astype(np.float32)
    from_logits = con.member_log_probabilities(logits + 7.0)  # a row shift changes nothing
    np.testing.assert_allclose(from_logits, log_softmax(logits, axis=1), atol=1e-12)
    np.testing.assert_allclose(con.member_log_probabilities(P), from_logits, atol=1e-5)


def test_log_linear_pool_drops_a_useless_member_and_nests_ts():
    S, y = network(4000, 5, [2.0], seed=1)
    noise = np.random.default_rng(2).normal(size=S.shape)
    S = np.concatenate([S, noise], axis=1)  # member 2: pure noise
    pool = con.LogLinearPool().fit(S, y)
    assert pool.weights_[0] == pytest.approx(0.5, rel=0.1)  # undoes the factor 2
    assert pool.weights_[1] < 0.05 and np.all(pool.weights_ >= 0)
    ts = con.TemperatureScaling().fit(S, y)
    assert nll(pool.predict_proba(S), y) <= nll(ts.predict_proba(S), y) + 1e-9


def test_ets_recovers_a_temperature_and_keeps_weights_on_the_simplex():
    S, y = network(20_000, 6, [3.0], seed=3)
    ets = con.EnsembleTemperatureScaling().fit(S, y)
    assert ets.temperature_ == pytest.approx(3.0, rel=0.1)
    assert ets.weights_.sum() == pytest.approx(1.0) and np.all(ets.weights_ >= 0)
    assert ets.weights_[0] > 0.8  # the scaled network is calibrated: little else is mixed in
    P = ets.predict_proba(S[:10])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_peers_of_an_ensemble_see_its_mean_log_probability():
    S, y = network(3000, 4, [0.5, 2.5], seed=4)
    L = (log_softmax(S[:, 0], axis=1) + log_softmax(S[:, 1], axis=1)) / 2
    ts = con.TemperatureScaling().fit(S, y)
    assert ts.temperature_ == pytest.approx(1.5, rel=0.1)
    np.testing.assert_allclose(ts.predict_proba(S), softmax(L / ts.temperature_, axis=1))
    vs = con.VectorScalingOfMean().fit(S, y)
    np.testing.assert_allclose(vs.predict_proba(S), softmax(L * vs.scale_ + vs.bias_, axis=1))


def test_resolve_keeps_the_default_and_quick_leaves_out_sms():
    assert [c.key for c in con.resolve(["ts"])] == ["default", "ts"]
    quick = [c.key for c in con.resolve(None, quick=True)]
    assert "sms" not in quick and "svs" in quick and quick[0] == "default"
    with pytest.raises(ValueError, match="unknown method"):
        con.resolve(["nope"])


def test_data_dir_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.delenv("FUSION_DATA_DIR", raising=False)
    with pytest.raises(NetworkDataNotFoundError, match="FUSION_DATA_DIR"):
        data_dir()
    monkeypatch.setenv("FUSION_DATA_DIR", str(tmp_path))
    with pytest.raises(NetworkDataNotFoundError, match="cifar10_ensemble.npz"):
        data_dir()
    (tmp_path / "networks").mkdir()
    (tmp_path / "networks" / "cifar10_ensemble.npz").write_bytes(b"")
    assert data_dir() == tmp_path / "networks"


def _means(values: dict) -> pd.DataFrame:
    """A per-case means table from ``{(case, method): (log_loss, top_ece, smece, cw)}``;
    None: skipped as the same model as TS."""
    rows = []
    for (case, method), v in values.items():
        family = "fusion" if method == "default" else "peer"
        row = {"case": case, "method": method, "label": method, "family": family, "seeds": 1}
        if v is None:
            row.update(status="skipped", reason=report.SAME_AS_TS)
            v = (math.nan,) * 4
        else:
            row.update(status="ok", reason="")
        row.update(
            log_loss=v[0],
            brier=0.1,
            top_label_ece=v[1],
            top_label_ece_mass=v[1],
            top_label_smece=v[2],
            classwise_ece=v[3],
            accuracy=0.9,
            fit_seconds=0.1,
        )
        rows.append(row)
    return pd.DataFrame(rows)


def test_targets_pass_and_fail_on_known_numbers():
    means = _means(
        {
            ("a", "default"): (0.5004, 0.010, 0.010, 0.001),
            ("a", "ts"): (0.6, 0.020, 0.020, 0.002),
            ("a", "loglinear"): None,  # M = 1: counts as TS
            ("a", "sms"): (0.5, 0.015, 0.030, 0.002),
            ("b", "default"): (0.4, 0.030, 0.010, 0.003),
            ("b", "ts"): (0.5, 0.020, 0.020, 0.002),
            ("b", "loglinear"): (0.45, 0.025, 0.015, 0.002),
            ("b", "sms"): (0.45, 0.025, 0.015, 0.002),
        }
    )
    checks, notes = report.targets(means)
    by = {(c["target"], c["case"]): c["result"] for c in checks}
    assert by[("log-loss <= best peer + 0.0005", "a")] == "PASS"  # 0.5004 <= 0.5 + 0.0005
    assert by[("top-label ECE <= min(TS, SMS)", "a")] == "PASS"
    assert by[("top-label ECE <= min(TS, SMS)", "b")] == "FAIL"  # 0.030 > 0.020
    assert by[("classwise ECE <= TS", "b")] == "FAIL"
    mean_ece = next(c for c in checks if c["target"].startswith("top-label ECE: mean"))
    # peers' means: ts 0.020, loglinear (TS's 0.020 on a, 0.025 on b) 0.0225, sms 0.020
    assert mean_ece["default"] == pytest.approx(0.020)
    assert mean_ece["bound"] == pytest.approx(0.85 * 0.020)
    assert mean_ece["result"] == "FAIL"
    mean_smece = next(c for c in checks if c["target"].startswith("top-label smooth ECE: mean"))
    assert mean_smece["bound"] == pytest.approx(0.85 * 0.0175)  # loglinear: (0.020 + 0.015) / 2
    assert mean_smece["result"] == "PASS"  # 0.010 <= 0.0149
    assert not notes


def test_a_run_on_generated_networks_reports_every_case_and_rebuilds_from_its_files(tmp_path):
    cases = (
        Case("one", "one network", ("net",), "given", "logits"),
        Case("pair", "two networks", ("weak", "strong"), "random", "probabilities"),
    )

    def loader(case: Case, seed: int, folder) -> Split:
        factors = [2.0] if case.M == 1 else [0.3, 2.0]
        S, y = network(400, 3, factors, seed=seed + 10 * case.M)
        if case.scores == "probabilities":
            S = softmax(S, axis=2).astype(np.float32)
        return Split(seed, S[:200], y[:200], S[200:], y[200:])

    contenders = [c for c in con.CONTENDERS if c.key not in con.PROBMETRICS]
    result = run(cases, (0, 1), contenders, tmp_path, progress=False, loader=loader)
    df = pd.DataFrame(result.rows)
    assert len(df) == (1 + 2) * len(contenders)  # a given split is fitted once
    ok = df[df["status"] == "ok"]
    assert set(df.loc[df["status"] == "skipped", "method"]) == {"ts_members", "loglinear"}
    assert (df.loc[df["status"] == "skipped", "case"] == "one").all()
    assert ok["log_loss"].notna().all() and (ok["top_label_smece"] >= 0).all()
    text = report.markdown(result, "cmd")
    assert "### one:" in text and "### pair:" in text and "Paired over seeds, pair" in text
    assert "PASS" in text or "FAIL" in text
    report.write(result, str(tmp_path / "out"), "cmd")
    assert report.read(str(tmp_path / "out")) == text


def test_resplit_pools_the_given_rows_and_splits_them_per_seed(tmp_path):
    rng = np.random.default_rng(0)
    for part, n in (("val", 60), ("test", 120)):
        np.save(tmp_path / f"cifar100_net_{part}_logits.npy", rng.normal(size=(n, 3)))
        np.save(tmp_path / f"cifar100_net_{part}_labels.npy", np.arange(n) % 3)
    given = Case("c100_net", "one network", ("net",), "given", "logits")
    pooled = resplit(given)
    assert pooled.split == "pooled" and resplit(pooled) == pooled
    ref = load_split(given, 7, tmp_path)  # the published split whatever the seed
    assert np.array_equal(ref.S_fuse[:, 0], np.load(tmp_path / "cifar100_net_val_logits.npy"))
    rows = np.concatenate([ref.S_fuse, ref.S_test])[:, 0, 0]
    splits = [load_split(pooled, seed, tmp_path) for seed in (0, 0, 1)]
    for sp in splits:
        assert sp.S_fuse.shape == (60, 1, 3) and sp.S_test.shape == (120, 1, 3)
        both = np.concatenate([sp.S_fuse, sp.S_test])[:, 0, 0]
        assert np.array_equal(np.sort(both), np.sort(rows))  # every row once
        assert np.array_equal(np.bincount(sp.y_fuse), [20, 20, 20])  # stratified
        label_of = dict(zip(rows, np.concatenate([ref.y_fuse, ref.y_test]), strict=True))
        assert [label_of[v] for v in sp.S_fuse[:, 0, 0]] == list(sp.y_fuse)  # labels travel
    assert np.array_equal(splits[0].S_fuse, splits[1].S_fuse)  # one seed, one split
    assert not np.array_equal(splits[0].S_fuse, splits[2].S_fuse)
    assert not np.array_equal(splits[0].S_fuse, ref.S_fuse)
