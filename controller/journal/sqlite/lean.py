"""sqlite_utils imported without numpy and pandas, which the journal never hands it.

sqlite_utils imports numpy and pandas when they are installed, only to map their scalar types
to column types (docs/benchmarks.md, "Where start-up's time goes": numpy alone is about 0.12 s
compiled from source, at every start, on an installation that has it). The journal gives
sqlite_utils integers, text and bytes only, so it is imported here, first, with both hidden;
a process that has imported them already (a notebook, a benchmark) keeps them, and either
can be imported afterwards as usual.
"""

from __future__ import annotations

import sys
from typing import Final

HIDDEN: Final = ("numpy", "pandas")
"""What sqlite_utils would import for nothing."""


def import_sqlite_utils() -> None:
    """Import ``sqlite_utils`` (once) with numpy and pandas hidden, unless already imported."""
    if "sqlite_utils" in sys.modules:
        return
    hidden = [name for name in HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment] # import of it fails: ImportError
    try:
        import sqlite_utils  # noqa: F401, PLC0415 - imported here to be imported so
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]


import_sqlite_utils()
