"""The multi-class benchmark of issue 13: M scorers x C classes on digits and Covertype.

``python benchmarks/bench_multiclass.py`` runs it (see :mod:`.cli`). The pieces:

* :mod:`.data` -- the setups (data set, scorers, row budget), stratified disjoint row
  splits, training the scorers once per (setup, seed) and the on-disk cache of their outputs;
* :mod:`.contenders` -- what is fitted on the scorers' class probabilities: ``fusion.fit``'s
  default, the one-vs-rest 1-D reductions, the peers as users fit them, plug-in candidates;
* :mod:`.runner` -- the loop (fit, predict, multi-class metrics, timing);
* :mod:`.report` -- paired differences against the best peer per cell, Markdown and CSV;
* :mod:`.speed` -- fit time against multinomial logistic regression on synthetic scores.
"""

from .contenders import PEERS
from .data import QUICK_SETUPS, SETUPS, Setup
from .runner import METRICS, RunConfig, RunResult, run

__all__ = ["PEERS", "SETUPS", "QUICK_SETUPS", "Setup", "METRICS", "RunConfig", "RunResult", "run"]
