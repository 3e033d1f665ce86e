"""The real-network benchmark's code lives in ``benchmarks/networks_lib`` (not part of the
installed package); Python finds it when ``benchmarks/`` is on the path, as it is when the
script runs."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
