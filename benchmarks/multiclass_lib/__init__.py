"""The multi-class benchmark of issue 21 (``python benchmarks/bench_multiclass.py``, see
:mod:`.cli`): M members x C classes, C = 7 to 1,000. Not part of the installed package: the
script puts ``benchmarks/`` on ``sys.path`` and imports it from there.

* :mod:`.data` -- setups whose scorers are trained on data (digits, Covertype, a 100-class
  ``make_classification`` task): stratified disjoint row splits, training once per
  (setup, seed), the on-disk cache of the scorers' outputs;
* :mod:`.synthetic` -- synthetic ensembles with a known posterior (main and held-out sets):
  member temperatures, noise, per-class biases, label smoothing, float32, forest-like
  zeros, logits;
* :mod:`.contenders` -- ``fusion.fit``'s default, the previous per-class model, the peers
  as users fit them (temperature scaling of the averaged log-probabilities and of each
  member, vector scaling, Dirichlet / LogisticRegressionCV, the best member after TS),
  plug-in candidates;
* :mod:`.runner` -- the loop (fit, predict, multi-class metrics, timing);
* :mod:`.report` -- the issue's check against TS of the average, paired summaries, one
  table per cell, CSV / JSON;
* :mod:`.speed` -- fit time against TS and LogisticRegression, peak memory, time against
  n x C.
"""
