"""The SQLite journals load sqlite_utils without numpy or pandas (journal/sqlite/lean.py).

docs/benchmarks.md, "Where start-up's time goes": sqlite_utils imports both when installed,
only to map their scalar types, and the journal never hands it either. Each check runs in a
fresh interpreter (this one has imported who knows what), on the development environment,
which has numpy installed. And the backend-neutral journal (docs/journal.md, "Backends")
loads no SQLite at all: a process on another backend never imports the SQLite one.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

JOURNAL_FIRST = """
import sys
import controller.journal.{backend}
import sqlite_utils.db
assert "sqlite_utils" in sys.modules
assert "numpy" not in sys.modules, "numpy imported with the journal"
assert "pandas" not in sys.modules, "pandas imported with the journal"
assert sqlite_utils.db.np is None
import numpy  # still importable afterwards, as usual
assert sys.modules["numpy"] is numpy
print("ok")
"""

NUMPY_FIRST = """
import sys
import numpy
import controller.journal.sqlite
import sqlite_utils.db
assert sqlite_utils.db.np is numpy  # a process that has it keeps sqlite_utils' numpy types
print("ok")
"""


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("backend", ["sqlite", "memory"])
def test_the_journal_imports_sqlite_utils_without_numpy_or_pandas(backend: str) -> None:
    assert importlib.util.find_spec("numpy") is not None  # installed: the check means something
    assert run(JOURNAL_FIRST.format(backend=backend)) == "ok"


def test_the_backend_neutral_journal_imports_no_sqlite() -> None:
    code = (
        "import sys, controller.journal, controller.journal.port, controller.journal.appending\n"
        "assert 'sqlite_utils' not in sys.modules\n"
        "assert not any(name.startswith('controller.journal.sqlite') for name in sys.modules)\n"
        "print('ok')"
    )
    assert run(code) == "ok"


def test_a_process_that_imported_numpy_first_keeps_it_for_sqlite_utils() -> None:
    assert run(NUMPY_FIRST) == "ok"
