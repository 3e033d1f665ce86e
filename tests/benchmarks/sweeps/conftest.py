"""The sweeps and the small-sample benchmark are scripts in ``benchmarks/`` (not part of the
installed package); Python finds them when ``benchmarks/`` is on the path, as it is when a
script runs."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
