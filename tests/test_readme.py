"""Every ```python block of README.md runs as pasted, on its own, in a fresh interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

#: A block that connects to this address needs a running Dask cluster: it is only compiled.
CLUSTER_ADDRESS = "tcp://scheduler:8786"

_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


def readme_blocks(text: str) -> list[tuple[str, str]]:
    """``(id, code)`` of every ```python block of ``text``; the id names the section."""
    blocks = []
    for number, match in enumerate(_BLOCK.finditer(text), start=1):
        headings = _HEADING.findall(text, 0, match.start())
        section = headings[-1] if headings else "top"
        slug = re.sub(r"[^a-z0-9]+", "-", section.lower()).strip("-")
        blocks.append((f"{number}-{slug}", match.group(1)))
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_the_blocks_are_found():
    # The quick start, the multi-class scores, FusionClassifier and the cluster at least; a
    # broken pattern would otherwise pass every test below by running none.
    assert len(BLOCKS) >= 4
    assert sum(CLUSTER_ADDRESS in code for _, code in BLOCKS) == 1


def test_extraction_keeps_blocks_whole():
    text = (
        "# A\n\n```python\nx = 1\n\n\ny = 2\n```\n\n## B c\n```bash\nls\n```\n```python\nz\n```\n"
    )
    assert readme_blocks(text) == [("1-a", "x = 1\n\n\ny = 2\n"), ("2-b-c", "z\n")]


@pytest.mark.parametrize(("name", "code"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_block_runs_in_a_fresh_interpreter(name, code, tmp_path):
    if CLUSTER_ADDRESS in code:
        compile(code, f"README.md block {name}", "exec")
        pytest.skip("needs a Dask cluster; compiled only")
    # One thread per BLAS/OpenMP pool: the suite runs one process per core, and
    # oversubscribed pools make these small fits many times slower.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,  # anything a block writes stays out of the checkout
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        f"README.md block {name} fails when run on its own:\n{code}\n{result.stderr[-3000:]}"
    )
