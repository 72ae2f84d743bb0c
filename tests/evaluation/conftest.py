"""Make ``tests/evaluation/ranker_data.py`` importable as ``ranker_data`` (pytest runs with
``--import-mode=importlib``, which does not put test folders on sys.path)."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
