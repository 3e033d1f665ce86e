"""Entry point of ``python -m fusion.bench``."""

import sys

from .cli import main

sys.exit(main())
