"""Make `guardian` resolve to the package, not to this tests folder.

pytest puts `tests/` on sys.path (rootdir conftest, prepend mode), where
`tests/guardian/` is an implicit namespace package that would shadow the
editable install's `guardian`. Putting the repository root first fixes the
lookup without touching the shared pytest configuration.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if sys.path[:1] != [ROOT]:
    sys.path.insert(0, ROOT)
if "guardian" in sys.modules and getattr(sys.modules["guardian"], "__file__", None) is None:
    del sys.modules["guardian"]
