"""The papers' benchmark (Wang & Liu 2020, Sec. 5.2: protocol, methods, tables, CLI).

The other benchmarks (scenario, multi-class, speed) are not installed: they live in the
repository's ``benchmarks/`` folder and import the peers and :mod:`._record` from here.

``python -m fusion.bench --datasets adult --quick --out DIR`` runs it from the shell; see
:mod:`fusion.bench.cli`. From Python::

    from fusion.bench import BenchConfig, run, report
    result = run(BenchConfig(datasets=("adult",), quick=True))
    print(report.markdown(result))
"""

from . import report
from .methods import DEFAULT_METHODS, METHOD_TABLE, MethodSpec, resolve_methods
from .peers import IsotonicMean, LogisticStacking, MonotoneLightGBM
from .protocol import BenchConfig, BenchResult, run

__all__ = [
    "BenchConfig",
    "BenchResult",
    "run",
    "report",
    "METHOD_TABLE",
    "DEFAULT_METHODS",
    "MethodSpec",
    "resolve_methods",
    "LogisticStacking",
    "IsotonicMean",
    "MonotoneLightGBM",
]
