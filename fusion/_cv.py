"""Cross-validation shared by every estimator: the one fold rule (every row's seeded content
key, dealt per class in memory: :func:`content_folds`; the key alone: :class:`HashFolds`),
splits from ``cv``, the fold of every row, the one-standard-error rule with its paired
standard error, and whether a choice at the edge of a grid deserves a warning."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

from ._chunks import by_rows
from .ecdf.sketch import GOLDEN, mix64

__all__ = [
    "cv_splits",
    "fold_seed",
    "content_keys",
    "deal_folds",
    "content_folds",
    "HashFolds",
    "splits_from_folds",
    "fold_ids",
    "paired_se",
    "path_settled",
    "CLEAR_RISE",
    "FLAT",
    "one_se_pick",
    "one_se_index",
    "EDGE_SE_FRACTION",
    "edge_matters",
]


def cv_splits(
    cv,
    y: np.ndarray,
    random_state,
    *,
    kept: np.ndarray | None = None,
    keys: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs for a method's internal cross-validation.

    Parameters
    ----------
    cv : int, scikit-learn splitter, or iterable of (train, test) index arrays
        An int with ``keys`` deals the rows to folds by content (:func:`content_folds`);
        without ``keys`` it is a shuffled stratified K-fold (a shuffled plain K-fold when
        a class has fewer than ``cv`` rows) seeded by ``random_state``. Shuffled rather
        than systematic folds on purpose: dealing rows sorted by score to the folds in
        turn made held-out Brier scores favour the largest model in RPR's simulations,
        with worse L2 error. A :class:`HashFolds` with ``keys`` hashes them. Another
        splitter's ``split(X, y)`` is called with a placeholder ``X``. Index pairs refer
        to the rows the user passed to ``fit``.
    y : ndarray
        Labels of the rows used for fitting.
    random_state : int, RandomState or None
        Seeds the folds of an int ``cv`` (:func:`fold_seed`).
    kept : ndarray of bool, optional
        Which of the user's rows are fitted (rows of zero weight are dropped before
        fitting); user-given index pairs are mapped onto the kept rows.
    keys : ndarray of shape (n, k), optional
        The content of every fitted row (its normalized scores). With an int ``cv``, rows
        are then assigned to folds by content (:func:`content_folds`): equal rows share a
        fold, so a row of weight 2 and the same row given twice give the same folds, and
        the folds do not depend on the order of the rows.

    Returns
    -------
    list of (train, test)
        Index arrays into the fitted rows; pairs with an empty side are dropped.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    n = y.shape[0]
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        n_folds = int(cv)
        if n_folds < 2:
            raise ValueError(f"cv must be at least 2 folds, got {n_folds}.")
        if n < n_folds:
            raise ValueError(f"cv={n_folds} folds need at least {n_folds} rows, got {n}.")
        if keys is not None:
            return splits_from_folds(content_folds(keys, y, n_folds, random_state), n_folds)
        counts = np.bincount(y.astype(int), minlength=2)
        splitter = (
            StratifiedKFold(n_folds, shuffle=True, random_state=random_state)
            if counts.min() >= n_folds
            else KFold(n_folds, shuffle=True, random_state=random_state)
        )
        splits = list(splitter.split(np.zeros((n, 1)), y))
    elif isinstance(cv, HashFolds) and keys is not None:
        if n < cv.n_splits:
            raise ValueError(f"cv={cv!r} needs at least {cv.n_splits} rows, got {n}.")
        return splits_from_folds(cv.folds(keys, y), cv.n_splits)
    elif hasattr(cv, "split") and not isinstance(cv, (str, bytes)):
        n_user = n if kept is None else kept.shape[0]
        if kept is None or kept.all():
            splits = list(cv.split(np.zeros((n, 1)), y))
        else:
            y_user = np.zeros(n_user)
            y_user[kept] = y
            splits = _map_to_kept(list(cv.split(np.zeros((n_user, 1)), y_user)), kept)
    else:
        try:
            pairs = [(np.asarray(tr), np.asarray(te)) for tr, te in cv]
        except (TypeError, ValueError):
            raise ValueError(
                f"cv must be an int, a scikit-learn splitter, or an iterable of (train, test) "
                f"index arrays; got {cv!r}."
            ) from None
        n_user = n if kept is None else kept.shape[0]
        for k, (tr, te) in enumerate(pairs):
            for part in (tr, te):
                if part.dtype.kind == "b":
                    raise ValueError(f"cv split {k}: pass index arrays, not boolean masks.")
                if part.size and (
                    part.dtype.kind not in "iu" or part.min() < -n_user or part.max() >= n_user
                ):
                    raise ValueError(f"cv split {k} holds indices outside the {n_user} rows of S.")
        pairs = [
            (tr % n_user if tr.size else tr, te % n_user if te.size else te) for tr, te in pairs
        ]
        splits = pairs if kept is None or kept.all() else _map_to_kept(pairs, kept)
    splits = [(tr, te) for tr, te in splits if tr.size and te.size]
    if not splits:
        raise ValueError("cv produced no split with rows on both sides.")
    return splits


def fold_seed(random_state) -> int:
    """The one int seed of every content-assigned fold from ``random_state`` (an int is used
    as is; a RandomState or None draws one, so a fit draws it once)."""
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(2**31))


def content_keys(content: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """A seeded 64-bit hash (``uint64``) of every row's content and label.

    The key of a row depends on nothing but the row and ``seed``: not on the order or the
    chunking of the rows, so equal rows share it and a dask block computes the keys of its
    rows as a fit in memory does. ``-0.0`` counts as ``0.0``.
    """
    content = np.asarray(content, dtype=np.float64).reshape(np.shape(y)[0], -1)

    def keys(content, y):
        with np.errstate(over="ignore"):
            h = np.full(content.shape[0], np.uint64(seed) * GOLDEN + GOLDEN, dtype=np.uint64)
            for col in (*content.T, y):
                col = np.ascontiguousarray(col, dtype=np.float64) + 0.0  # -0.0 -> 0.0
                h ^= col.view(np.uint64)
                h = mix64(h + GOLDEN)
        return h

    return by_rows(keys, content, np.asarray(y))


def deal_folds(keys: np.ndarray, y: np.ndarray, n_folds: int) -> np.ndarray:
    """The folds of rows in memory from their content keys (:func:`content_keys`): the
    distinct keys of each class, in increasing order, dealt to the folds in turn, each class
    continuing where the previous one stopped (the classes in the order of their smallest
    key, so that renaming the classes changes nothing when the keys do not name them).

    The keys are a seeded hash, so their order is a shuffle that needs no generator. Every
    class's distinct rows spread over the folds within one of each other, and so do all
    distinct rows (stratified folds, also on small samples); equal rows share a fold (a
    repeated row is a doubled weight), and permuting the rows permutes their folds.
    """
    if keys.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, cls = np.unique(y, return_inverse=True)
    cls = cls.reshape(-1)
    order = np.lexsort((keys, cls))
    k, c = keys[order], cls[order]
    new = np.ones(k.shape[0], dtype=bool)
    new[1:] = (k[1:] != k[:-1]) | (c[1:] != c[:-1])
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])  # every class's smallest key
    distinct = np.add.reduceat(new.astype(np.int64), first)
    offset = np.empty(first.shape[0], dtype=np.int64)
    by_key = np.argsort(k[first], kind="stable")
    offset[by_key] = np.cumsum(distinct[by_key]) - distinct[by_key]
    rank = np.cumsum(new) - 1  # among all distinct rows, class after class
    within = rank - rank[first][c]  # the classes are 0, 1, ... in sorted order
    fold = np.empty(k.shape[0], dtype=np.int64)
    fold[order] = (within + offset[c]) % n_folds
    return fold


def content_folds(content: np.ndarray, y: np.ndarray, n_folds: int, random_state) -> np.ndarray:
    """Fold of every row in memory, decided by the row's content and label and stratified by
    label: :func:`deal_folds` of the :func:`content_keys` seeded by
    :func:`fold_seed` of ``random_state`` (the folds of an int ``cv``)."""
    return deal_folds(content_keys(content, y, fold_seed(random_state)), y, n_folds)


class HashFolds:
    """Cross-validation folds from every row's content alone: the fold of a row is its
    seeded content key (:func:`content_keys`) modulo ``n_splits``.

    These are the folds a dask fit of a Bernstein model deals for an int ``cv`` (and a
    multi-class fit in memory): they do not depend on the chunking, but unlike an int
    ``cv`` on binary rows in memory they are not stratified. Pass
    ``cv=HashFolds(k, random_state=r)`` to an in-memory fit to see the folds of a dask fit
    with ``cv=k`` and ``random_state=r``. Inside a fusion estimator the content of a row
    is what an int ``cv`` hashes (its normalized scores; for multi-class scores their
    log-probabilities); :meth:`split` hashes the rows of ``X`` as given.

    Parameters
    ----------
    n_splits : int >= 2, default=5
        Number of folds.
    random_state : int, RandomState or None, default=0
        Seeds the hash (:func:`fold_seed`).
    """

    def __init__(self, n_splits: int = 5, random_state=0):
        if not isinstance(n_splits, numbers.Integral) or isinstance(n_splits, bool):
            raise ValueError(f"n_splits must be an int, got {n_splits!r}.")
        if n_splits < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}.")
        self.n_splits = int(n_splits)
        self.random_state = random_state

    def __repr__(self) -> str:
        return f"HashFolds(n_splits={self.n_splits}, random_state={self.random_state!r})"

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """The number of folds."""
        return self.n_splits

    def folds(self, content: np.ndarray, y: np.ndarray, seed: int | None = None) -> np.ndarray:
        """Fold of every row with ``content`` and label ``y`` (``seed``: the one drawn from
        ``random_state``; None: draw it now)."""
        seed = fold_seed(self.random_state) if seed is None else seed
        return (content_keys(content, y, seed) % np.uint64(self.n_splits)).astype(np.int64)

    def split(self, X, y=None, groups=None):
        """``(train, test)`` index arrays of every fold of the rows of ``X`` (and ``y``)."""
        X = np.asarray(X)
        y = np.zeros(X.shape[0]) if y is None else np.asarray(y)
        fold = self.folds(X.reshape(X.shape[0], -1), y)
        idx = np.arange(X.shape[0])
        for f in range(self.n_splits):
            yield idx[fold != f], idx[fold == f]


def splits_from_folds(fold: np.ndarray, n_folds: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` pairs of a fold assignment (every fold tested once, trained on the
    others); folds with an empty side are dropped."""
    idx = np.arange(fold.shape[0])
    splits = [(idx[fold != f], idx[fold == f]) for f in range(n_folds)]
    splits = [(tr, te) for tr, te in splits if tr.size and te.size]
    if len(splits) < 2:
        raise ValueError(
            f"cv={n_folds} folds need at least {n_folds} distinct rows; the data have fewer."
        )
    return splits


def _map_to_kept(pairs, kept: np.ndarray):
    pos = np.cumsum(kept) - 1
    return [(pos[tr[kept[tr]]], pos[te[kept[te]]]) for tr, te in pairs]


def fold_ids(splits, n: int) -> np.ndarray | None:
    """Fold number of every row when the test sets partition the rows and every training set
    is the complement of its test set (K-fold); None otherwise."""
    fold = np.full(n, -1, dtype=np.int64)
    for f, (tr, te) in enumerate(splits):
        if np.any(fold[te] >= 0) or tr.shape[0] + te.shape[0] != n:
            return None
        fold[te] = f
    if np.any(fold < 0):
        return None
    for f, (tr, _) in enumerate(splits):
        if np.any(fold[tr] == f):  # pragma: no cover - implied by the sizes above
            return None
    return fold


# ---------------------------------------------------------------------------------------------
# The one-standard-error rule.


def paired_se(held: np.ndarray, w: np.ndarray, ref: int) -> np.ndarray:
    """Standard error of every candidate's excess held-out loss over candidate ``ref``.

    ``held`` is ``(n_candidates, n_units)``: the held-out loss of every unit (a row, or a cell
    of one fold) under every candidate, all scored on the same units, so the differences
    are paired. With ``p = w / sum(w)`` the excess is ``d @ p`` for ``d = held - held[ref]``,
    and its variance ``sum p^2 (d - d @ p)^2 / (1 - sum p^2)`` (the weighted mean of
    independent units; unit weights give the usual ``var(d) / (n - 1)``).
    """
    p = np.asarray(w, dtype=float) / float(np.sum(w))
    d = held - held[ref]
    excess = d @ p
    var = ((d - excess[:, None]) ** 2) @ (p**2)
    return np.sqrt(var / max(1.0 - float(p @ p), 1e-12))


def one_se_pick(mean: np.ndarray, se: np.ndarray, preference=None, factor: float = 1.0) -> int:
    """The one-standard-error rule: among the candidates whose mean held-out loss exceeds the
    best one's by at most ``factor`` times the standard error of that excess (``se``, from
    :func:`paired_se` or a path's own), the first in ``preference`` order (a key function
    of the candidate's index; None: the first index, the candidates being listed from the
    most penalized). A candidate whose mean is not finite loses; if every one's is not, the
    first in that order is taken."""
    mean = np.where(np.isfinite(mean), np.asarray(mean, dtype=float), np.inf)
    best = int(np.argmin(mean))
    within = np.flatnonzero(mean - mean[best] <= factor * np.asarray(se, dtype=float))
    if within.size == 0:  # every mean infinite (inf - inf is NaN)
        within = np.arange(mean.size)
    if preference is None:
        return int(within[0])
    return int(min(within, key=preference))


def one_se_index(held: np.ndarray, w: np.ndarray) -> int:
    """:func:`one_se_pick` from the held-out losses ``(n_candidates, n_units)`` of candidates
    listed from the most penalized, unit weights ``w``."""
    mean = held @ w / w.sum()
    ref = int(np.argmin(np.where(np.isfinite(mean), mean, np.inf)))
    return one_se_pick(mean, paired_se(held, w, ref))


#: A held-out loss this many standard errors above a penalty path's minimum ends the path on
#: its own (:func:`path_settled`).
CLEAR_RISE = 3.0
#: A rise of a path's held-out loss within this share of its minimum is flat: the standard
#: error :func:`path_settled` compares rises with is at least this share of the minimum.
FLAT = 1e-4


def path_settled(mean: np.ndarray, se: np.ndarray, patience: int) -> bool:
    """Whether the rest of a penalty path (from the most penalized; ``mean`` its held-out
    losses so far, ``se`` the paired standard errors of their excess over the lowest) cannot
    change the one-standard-error pick: the loss has risen above its minimum by more than
    the standard error at the last ``patience`` penalties, or by more than
    :data:`CLEAR_RISE` of them at the last one. The one rule of every Bernstein path
    (binary, multi-class).

    A flat stretch is no such evidence: a curve flat from ``lam = inf`` to 1 went on to fall
    by 0.01 at 1e-4 (a CIFAR-100 network), so the path goes on through it. A clear rise is:
    smaller penalties fit the training folds closer still (at C = 1,000, M = 5 and n =
    10,000 the class biases' ridge 1e-3 was 4.4 standard errors above 1e-2; 1e-4, worse
    again by 0.036, took a quarter of the fit's time). The standard error counts as at
    least :data:`FLAT` of the minimum: at the start of a path nearly equal models can score
    a few 1e-5 above ``lam = inf`` with paired standard errors smaller still, and the path
    stopped there on 2 of 10 fold seeds of a CIFAR-100 network (0.04 of test log-loss lost).
    """
    mean = np.asarray(mean, dtype=float)
    last = mean.shape[0] - 1
    best = int(np.argmin(mean))
    if last == best:
        return False
    se = np.maximum(np.asarray(se, dtype=float), FLAT * abs(mean[best]))
    rise = mean - mean[best]
    if rise[last] > CLEAR_RISE * se[last]:
        return True
    return bool(last - best >= patience and np.all(rise[-patience:] > se[-patience:]))


# ---------------------------------------------------------------------------------------------
# Grid edges.

#: :func:`edge_matters`: the step into the edge must gain more than this fraction of the
#: largest paired standard error of the edge against the other candidates.
EDGE_SE_FRACTION = 0.25


def edge_matters(
    mean: np.ndarray,
    se: np.ndarray,
    edge: int,
    neighbour: int,
    fraction: float = EDGE_SE_FRACTION,
) -> bool:
    """Whether a choice at the edge of a grid is worth a warning ("a value beyond the grid
    might fit better"): the edge's mean held-out loss is below its neighbour's by more than
    ``fraction`` of the largest paired standard error of the edge against any candidate.

    The one place this decision is made: every grid-edge warning asks it.

    Parameters
    ----------
    mean : ndarray of shape (n_candidates,)
        Mean held-out loss of the candidates of one grid (NaN: not evaluated, ignored).
    se : ndarray of shape (n_candidates,)
        Standard error of ``mean[k] - mean[edge]`` for every ``k``, paired on the same
        held-out units (:func:`paired_se` with ``ref=edge``, or a path's own).
    edge, neighbour : int
        Indices of the chosen edge value and of the candidate it must beat: the grid's next
        value inwards along a smooth path (a penalty), the best of the other candidates
        where the held-out curve is jagged and the lowest wins (the rank-only model's
        degrees).
    fraction : float, default=EDGE_SE_FRACTION
        0.25. The gain of the last step is compared with the largest paired standard error
        against the edge, not with the step's own: two neighbouring values give nearly the
        same predictions, so their paired difference has a tiny standard error and a step
        too small to matter is still "significant" (issue 28: FusionClassifier picked the
        smallest ``lam``, 1e-6, whose step beat its neighbour by 1.3 of its own standard
        error; extending the grid to 1e-10 changed the held-out log-loss by 1e-4). The
        largest paired standard error is the resolution at which this cross-validation
        tells the grid's candidates apart (the scale of its one-standard-error rule); a
        last step below a quarter of it is part of a flat tail (there 0.09 of it), while a
        curve still falling at a rate that, over a few more steps, would make a difference
        the rule acts on passes it.

    Returns
    -------
    bool
        True: warn. A neighbour that was not evaluated (a path stopped early) gives True.
    """
    mean = np.asarray(mean, dtype=float)
    se = np.asarray(se, dtype=float)
    if not (np.isfinite(mean[neighbour]) and np.isfinite(mean[edge])):
        return True
    seen = np.isfinite(mean) & np.isfinite(se)
    scale = float(np.max(se[seen])) if seen.any() else 0.0
    return bool(mean[neighbour] - mean[edge] > fraction * scale)
