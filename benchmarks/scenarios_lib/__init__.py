"""The scenario benchmark of issue 12: realistic scorers, fusion methods, user-fitted peers.

``python benchmarks/bench_scorers.py`` runs it (see :mod:`.cli`). Not part of the installed
package: the script runs with ``benchmarks/`` on ``sys.path`` and imports it from there, with
the pieces it shares with the multi-class benchmark in ``harness``. The pieces:

* :mod:`.scorers` -- the scikit-learn scorers (kinds);
* :mod:`.catalog` -- the scenarios (main, held-out, quick), feature subsets, row splits;
* :mod:`.scores` -- training the scorers once per (scenario, seed), the on-disk cache;
* :mod:`.contenders` -- what is fitted on the scores: ``fusion.fit`` default, every
  registered method, the peers as users fit them, plug-in candidates;
* :mod:`.runner` -- the loop (fit, predict, metrics, timing);
* :mod:`.paired` -- paired differences against LR on logits and the clearly-worse/better
  flags;
* :mod:`.tables` -- Markdown and CSV output.
"""

from .catalog import HOLDOUT, MAIN, QUICK, Scenario, ScorerSpec
from .contenders import PEERS, REFERENCE, Contender
from .paired import cell_stats, paired_flag, summary
from .runner import RunConfig, RunResult, run

__all__ = [
    "Scenario",
    "ScorerSpec",
    "MAIN",
    "HOLDOUT",
    "QUICK",
    "Contender",
    "PEERS",
    "REFERENCE",
    "RunConfig",
    "RunResult",
    "run",
    "paired_flag",
    "cell_stats",
    "summary",
]
