"""The real-network calibration benchmark of issue 26 (``python benchmarks/bench_networks.py``,
see :mod:`.cli`): CIFAR networks trained by others, calibrated on held-out rows by
``fusion.fit`` and by the post-hoc calibrators their users fit. Not part of the installed
package: the script puts ``benchmarks/`` on ``sys.path`` and imports it from there.

* :mod:`.data` -- where the networks' outputs are (``FUSION_DATA_DIR``), the cases, the
  given and the random (stratified, per seed) row splits;
* :mod:`.contenders` -- ``fusion.fit``'s default and the peers: temperature scaling of the
  mean log-probability and of each member, the log-linear pool, ensemble temperature
  scaling, vector scaling, SVS and SMS (probmetrics, optional);
* :mod:`.runner` -- the loop (fit, predict, metrics, timing);
* :mod:`.report` -- per-case tables, paired differences over seeds, the targets' check,
  CSV / JSON;
* :mod:`.cli` -- the command line.
"""
