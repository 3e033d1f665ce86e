"""A toy scenario on a synthetic data set in the loaders' format (2,000 rows; the data set of
tests/bench/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scenarios_lib.catalog import Scenario, ScorerSpec
from scipy.special import expit

from fusion.datasets import Dataset

pd = pytest.importorskip("pandas")

TOY = Scenario(
    "toy",
    "toy",
    "test pair",
    (ScorerSpec("lr", n_train=300), ScorerSpec("gnb", n_train=300)),
    n_fuse=(100, 300),
    n_test=1_000,
)


def synthetic_dataset(n: int = 2000, seed: int = 0, name: str = "toy") -> Dataset:
    """Three numeric features and one categorical, label from a logistic model."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    cat = rng.choice(["a", "b", "c"], size=n)
    logit = 1.5 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] * x[:, 0] + (cat == "a") - 0.3
    y = (rng.random(n) < expit(logit)).astype(np.int64)
    X = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2], "kind": cat})
    X["kind"] = X["kind"].astype("category")
    return Dataset(name=name, X=X, y=y, categorical=("kind",), positive="y == 1", path=Path(name))


class CountingLoader:
    """``loader(name)`` returning the synthetic data set and counting the calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, name):
        self.calls += 1
        return synthetic_dataset(2_000, seed=0, name=name)
