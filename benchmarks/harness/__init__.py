"""What the scenario, multi-class and real-network benchmarks share (``scenarios_lib``,
``multiclass_lib``, ``networks_lib``).
Not part of the installed package: the scripts in ``benchmarks/`` run with this folder on
``sys.path`` and import it from there.

* :mod:`.contender` -- one row of a benchmark (``Contender``);
* :mod:`.scores` -- the scorers' outputs per (setup or scenario, seed), cached on disk;
* :mod:`.loop` -- the fit loop: seeding, timing, failures as rows, the progress bar;
* :mod:`.paired` -- paired differences over seeds and the clearly-worse/better flags;
* :mod:`.markdown` -- table pieces of the reports;
* :mod:`.cli` -- the command-line options and steps the command lines share.

What they also share with the papers' benchmark (``python -m fusion.bench``) stays in the
package: :mod:`fusion.bench._record` (warnings and chosen hyper-parameters of a fit) and the
logit/probability features of :mod:`fusion.bench.peers`.
"""
