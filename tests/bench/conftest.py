"""Synthetic data sets in the loaders' format, so the protocol runs in a second."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit

pd = pytest.importorskip("pandas")

from fusion.datasets import Dataset  # noqa: E402


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


@pytest.fixture
def toy_loader():
    cache = {}

    def loader(name: str) -> Dataset:
        if name not in cache:
            cache[name] = synthetic_dataset(seed=len(name), name=name)
        return cache[name]

    return loader
