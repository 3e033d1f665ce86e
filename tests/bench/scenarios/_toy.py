"""A toy scenario on the synthetic data set of tests/bench/conftest.py (2,000 rows)."""

from __future__ import annotations

from fusion.bench.scenarios.catalog import Scenario, ScorerSpec

from ..conftest import synthetic_dataset

TOY = Scenario(
    "toy",
    "toy",
    "test pair",
    (ScorerSpec("lr", n_train=300), ScorerSpec("gnb", n_train=300)),
    n_fuse=(100, 300),
    n_test=1_000,
)


class CountingLoader:
    """``loader(name)`` returning the synthetic data set and counting the calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, name):
        self.calls += 1
        return synthetic_dataset(2_000, seed=0, name=name)
