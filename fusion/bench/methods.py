"""The methods of the benchmark: what each table row runs and whether it is available.

Fusion methods come from the package registry :data:`fusion.METHODS` (they register
themselves as they land); a method that is not registered is reported as skipped, never
replaced by something else. The peers are built here (:mod:`fusion.bench.peers`); LightGBM
is skipped when the optional ``lightgbm`` package is missing.

Every method keeps its own hyper-parameter selection (5-fold CV inside the fusion sample by
default); the bench only fixes ``random_state`` (for reproducibility from ``--seed``) and,
with ``--quick``, narrows the grids it knows.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from .._base import FusionEstimator
from .peers import IsotonicMean, LogisticStacking, MonotoneLightGBM

__all__ = ["MethodSpec", "METHOD_TABLE", "DEFAULT_METHODS", "resolve_methods", "build"]


@dataclass(frozen=True)
class MethodSpec:
    """One row of the benchmark table.

    Attributes
    ----------
    key : str
        Name on the command line (``--methods``).
    label : str
        Row label of the table.
    registry : str or None
        Key in :data:`fusion.METHODS` for the package's own methods; None for a peer.
    peer : type or None
        Estimator class of a peer.
    params : dict
        Constructor parameters always passed (when the estimator accepts them).
    quick_params : dict
        Extra parameters for ``--quick`` (smaller CV grids).
    requires : str or None
        Importable module the method needs (optional dependency).
    """

    key: str
    label: str
    registry: str | None = None
    peer: type[FusionEstimator] | None = None
    params: dict = field(default_factory=dict)
    quick_params: dict = field(default_factory=dict)
    requires: str | None = None


METHOD_TABLE: tuple[MethodSpec, ...] = (
    # The paper's three, in the order of its Table 1.
    MethodSpec("mrmic", "MR-MIC", registry="mrmic"),
    MethodSpec("copula", "CopulaFusion", registry="copula"),
    MethodSpec("bernstein", "BernsteinFusion (default)", registry="bernstein"),
    # The paper's own Bernstein model: ranks only, degree by cross-validation.
    MethodSpec(
        "bernstein_rank",
        "BernsteinFusion (rank-only)",
        registry="bernstein",
        params={"base": None},
        quick_params={"degree_grid": (1, 2, 3, 4, 5)},
    ),
    # One-dimensional calibrators on the mean normalized score.
    MethodSpec("rpr", "RPR (mean score)", registry="rpr", params={"combine": "mean"}),
    MethodSpec("enir", "ENIR (mean score)", registry="enir", params={"combine": "mean"}),
    # Peers.
    MethodSpec("logistic", "LR stacking (logits)", peer=LogisticStacking, quick_params={"Cs": 5}),
    MethodSpec(
        "logistic_u",
        "LR stacking (u-scale)",
        peer=LogisticStacking,
        params={"scale": "u"},
        quick_params={"Cs": 5},
    ),
    MethodSpec("isotonic", "Isotonic (mean score)", peer=IsotonicMean),
    MethodSpec(
        "lightgbm",
        "LightGBM (monotone)",
        peer=MonotoneLightGBM,
        quick_params={"param_grid": {"n_estimators": [100], "num_leaves": [4, 8]}},
        requires="lightgbm",
    ),
)

#: ``--methods`` default: every row of :data:`METHOD_TABLE`.
DEFAULT_METHODS: tuple[str, ...] = tuple(m.key for m in METHOD_TABLE)


def _registry() -> dict[str, type[FusionEstimator]]:
    import fusion

    return dict(fusion.METHODS)


def resolve_methods(keys) -> tuple[list[tuple[MethodSpec, type[FusionEstimator]]], list[str]]:
    """Split the requested methods into runnable ones and skip notes.

    A key of :data:`METHOD_TABLE` or of :data:`fusion.METHODS` is accepted; anything else
    is a ``ValueError``.

    Returns
    -------
    runnable : list of (MethodSpec, estimator class)
    skipped : list of str
        One note per method that cannot run here, saying why.
    """
    table = {m.key: m for m in METHOD_TABLE}
    registry = _registry()
    runnable, skipped, seen = [], [], set()
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        spec = table.get(key)
        if spec is None:
            if key not in registry:
                known = sorted(set(table) | set(registry))
                raise ValueError(f"unknown method {key!r}; known methods: {known}.")
            spec = MethodSpec(key, registry[key].__name__, registry=key)
        if spec.requires is not None and importlib.util.find_spec(spec.requires) is None:
            skipped.append(
                f"{spec.label} (`{key}`): skipped, the optional package `{spec.requires}` is "
                "not installed (pip install 'fusion-calibration[bench]')."
            )
            continue
        if spec.registry is not None:
            cls = registry.get(spec.registry)
            if cls is None:
                skipped.append(
                    f"{spec.label} (`{key}`): skipped, not available in this version of "
                    f"fusion (`fusion.METHODS` has no {spec.registry!r})."
                )
                continue
        else:
            cls = spec.peer
        runnable.append((spec, cls))
    return runnable, skipped


def build(
    spec: MethodSpec, cls: type[FusionEstimator], *, random_state: int, quick: bool
) -> FusionEstimator:
    """A fresh estimator for one round: the spec's parameters that ``cls`` accepts."""
    accepted = cls().get_params(deep=False)
    params = dict(spec.params)
    if quick:
        params.update(spec.quick_params)
    if "random_state" in accepted:
        params["random_state"] = random_state
    return cls(**{k: v for k, v in params.items() if k in accepted})
