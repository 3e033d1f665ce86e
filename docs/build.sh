#!/usr/bin/env bash
# Build the HTML documentation into docs/_build/html, running every gallery script; any
# Sphinx warning (or a failing example) fails the build. Needs the "docs" extra:
#     .venv/bin/pip install -e ".[docs]"
# Python: $PYTHON, else the checkout's .venv, else python3.
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${PYTHON:-}" ]; then
    if [ -x ../.venv/bin/python ]; then PYTHON=../.venv/bin/python; else PYTHON=python3; fi
fi
export MPLBACKEND=Agg
# The gallery uses local copies of the benchmark data sets when FUSION_DATA_DIR names them
# (by default the shared/datasets folder beside the checkout, as in CI) and generated data
# otherwise; it never downloads.
if [ -z "${FUSION_DATA_DIR:-}" ] && [ -d ../../shared/datasets ]; then
    FUSION_DATA_DIR="$(cd ../../shared/datasets && pwd)"
    export FUSION_DATA_DIR
fi
# One BLAS thread per process: the examples are small, and CI machines are shared.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
# A clean build every time: pages left over from an earlier build can hide warnings.
rm -rf _build auto_examples generated
"$PYTHON" -m sphinx -W --keep-going -b html . _build/html
echo "docs: open docs/_build/html/index.html"
