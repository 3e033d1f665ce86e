"""The networks' outputs (``$FUSION_DATA_DIR/networks``, see its README): the cases and their
fusion / test rows.

* CIFAR-100, one network each (M = 1, logits): the calibrator is fitted on the ``val`` rows
  (5,000) and evaluated on the ``test`` rows (10,000), as published; one split, so one seed.
* CIFAR-10, two networks (LeNet-5, WideResNet-16-4; softmax probabilities, rows aligned):
  the ensemble (M = 2) and each network alone (M = 1). There is no validation split: per
  seed the 10,000 rows are split at random into halves, stratified by class
  (``StratifiedShuffleSplit``), the same split for the three cases of a seed.
* ``--resplit`` (:func:`resplit`): the CIFAR-100 cases' val and test rows pooled (15,000)
  and split per seed into 5,000 fusion and 10,000 test rows at random, stratified by
  class: whether a result on the published split holds on other draws of the same rows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

__all__ = [
    "SUBDIR",
    "Case",
    "Split",
    "CASES",
    "NetworkDataNotFoundError",
    "data_dir",
    "load_split",
    "resplit",
]

#: The folder of the networks' files under ``FUSION_DATA_DIR``.
SUBDIR = "networks"


class NetworkDataNotFoundError(FileNotFoundError):
    """The networks' files are not where the benchmark looks."""


@dataclass(frozen=True)
class Case:
    """One benchmark case: which networks, how the rows are split.

    Attributes
    ----------
    name : str
        Its key (``--cases``, the CSV files).
    title : str
        Its heading in the report.
    members : tuple of str
        The networks fused (M = ``len(members)``).
    split : str
        ``"given"`` (CIFAR-100: the published val/test rows), ``"random"`` (CIFAR-10:
        stratified halves per seed) or ``"pooled"`` (CIFAR-100 by :func:`resplit`).
    scores : str
        What the files hold: ``"logits"`` or ``"probabilities"`` (passed as they are).
    """

    name: str
    title: str
    members: tuple[str, ...]
    split: str
    scores: str

    @property
    def M(self) -> int:
        return len(self.members)

    @property
    def dataset(self) -> str:
        return "CIFAR-100" if self.name.startswith("c100") else "CIFAR-10"


CASES: tuple[Case, ...] = (
    Case("c100_densenet121", "CIFAR-100 DenseNet-121", ("densenet121",), "given", "logits"),
    Case("c100_resnet110", "CIFAR-100 ResNet-110", ("resnet110",), "given", "logits"),
    Case(
        "c10_ensemble",
        "CIFAR-10 ensemble LeNet-5 + WideResNet-16-4",
        ("lenet5", "wideresnet16_4"),
        "random",
        "probabilities",
    ),
    Case("c10_lenet5", "CIFAR-10 LeNet-5 alone", ("lenet5",), "random", "probabilities"),
    Case(
        "c10_wideresnet16_4",
        "CIFAR-10 WideResNet-16-4 alone",
        ("wideresnet16_4",),
        "random",
        "probabilities",
    ),
)


@dataclass(frozen=True)
class Split:
    """The fusion rows and the test rows of one case and seed: ``S`` of shape (n, M, C) as
    the networks give them, ``y`` class indices ``0 .. C - 1``."""

    seed: int
    S_fuse: np.ndarray
    y_fuse: np.ndarray
    S_test: np.ndarray
    y_test: np.ndarray

    @property
    def C(self) -> int:
        return int(self.S_fuse.shape[2])


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The folder holding the networks' files.

    ``explicit`` when given, else ``$FUSION_DATA_DIR/networks`` (or ``$FUSION_DATA_DIR``
    itself when it holds the files).

    Raises
    ------
    NetworkDataNotFoundError
        When neither is set or the folder lacks the files, saying what to set.
    """
    marker = "cifar10_ensemble.npz"
    if explicit is not None:
        candidates = [Path(explicit).expanduser()]
    else:
        env = os.environ.get("FUSION_DATA_DIR")
        if not env:
            raise NetworkDataNotFoundError(
                "FUSION_DATA_DIR is not set: point it at the folder holding networks/ "
                "(in this project: FUSION_DATA_DIR=../shared/datasets from the repository "
                "root), or pass --data-dir."
            )
        root = Path(env).expanduser()
        candidates = [root / SUBDIR, root]
    for folder in candidates:
        if (folder / marker).is_file():
            return folder
    raise NetworkDataNotFoundError(
        f"no networks' files ({marker}, cifar100_*_logits.npy) in "
        + " or ".join(str(c) for c in candidates)
        + ": point FUSION_DATA_DIR at the folder holding networks/ (in this project: "
        "FUSION_DATA_DIR=../shared/datasets from the repository root), or pass --data-dir."
    )


def _load_cifar100(folder: Path, net: str) -> Split:
    def part(name: str) -> tuple[np.ndarray, np.ndarray]:
        path = folder / f"cifar100_{net}_{name}_logits.npy"
        if not path.is_file():
            raise NetworkDataNotFoundError(f"missing {path} (see {folder / 'README.md'}).")
        logits = np.load(path)
        labels = np.load(folder / f"cifar100_{net}_{name}_labels.npy").astype(np.int64)
        return logits[:, None, :], labels

    S_fuse, y_fuse = part("val")
    S_test, y_test = part("test")
    return Split(0, S_fuse, y_fuse, S_test, y_test)


def _load_cifar10(folder: Path, members: tuple[str, ...], seed: int) -> Split:
    with np.load(folder / "cifar10_ensemble.npz") as z:
        S = np.stack([z[m] for m in members], axis=1)
        y = z["labels"].astype(np.int64)
    return _stratified(S, y, seed, test_size=0.5)


def resplit(case: Case) -> Case:
    """``case`` with its given split replaced by per-seed random ones of the pooled rows."""
    return replace(case, split="pooled") if case.split == "given" else case


def load_split(case: Case, seed: int, folder: Path) -> Split:
    """The fusion and test rows of ``case`` for ``seed`` (ignored for a given split)."""
    if case.split in ("given", "pooled"):
        (net,) = case.members
        given = _load_cifar100(folder, net)
        return given if case.split == "given" else _pooled(given, seed)
    return _load_cifar10(folder, case.members, seed)


def _pooled(given: Split, seed: int) -> Split:
    """``given``'s rows pooled and split at random (stratified), as many fusion rows as
    before."""
    S = np.concatenate([given.S_fuse, given.S_test])
    y = np.concatenate([given.y_fuse, given.y_test])
    return _stratified(S, y, seed, train_size=given.y_fuse.shape[0])


def _stratified(S: np.ndarray, y: np.ndarray, seed: int, **size) -> Split:
    """Rows split at random into fusion and test rows, stratified by class (``size``: the
    ``StratifiedShuffleSplit`` size arguments)."""
    from sklearn.model_selection import StratifiedShuffleSplit

    split = StratifiedShuffleSplit(n_splits=1, random_state=seed, **size)
    fuse, test = next(split.split(np.zeros(y.shape[0]), y))
    return Split(seed, S[fuse], y[fuse], S[test], y[test])
