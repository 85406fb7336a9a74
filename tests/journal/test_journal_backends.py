"""One factory chooses the journal's backend by its location's scheme (docs/journal.md, "Backends").

controller/journal/backends.py: :data:`BACKENDS` maps a scheme to the module and class of its
backend, imported when a location of that scheme is first opened; nothing else asks which
kind a location is. So a process whose journal is an SQLite file never loads psycopg: the
commands that open, append to, read and verify it, and the service (``jackpotd demo``, which
starts it on its journal and plays rounds), import the PostgreSQL backend's modules only for
a ``postgresql://`` URL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from support.drivers.mosquitto import free_port
from support.journal.journal_rig import pool_opened, table_configured, wager

from controller.journal import location
from controller.journal.backends import BACKENDS, backend_for
from controller.journal.location import DatabaseUrl, journal_location
from controller.journal.postgres.backend import PostgresBackend
from controller.journal.sqlite.backend import SqliteBackend
from controller.ledger.domain import LEDGER
from controller.ledger_journal import open_journal

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]

SQLITE_ONLY = """
import json, sys
from pathlib import Path
from controller.cli import main
from controller.service import wiring  # the service's start-up, whichever its journal
from controller.journal.postgres.fence import Fence
from controller.ledger_journal import open_sequenced

path, demo, port = sys.argv[1:]
statuses = [main(["verify", "--db", path]), main(["meters", "--db", path])]
statuses.append(main(["demo", "--rounds", "1", "--db", demo, "--port", port, "--interval", "0.01"]))
statuses.append(main(["verify", "--db", demo]))
journal = open_sequenced(Path(path), Fence("node-1"))
head = journal.head[0]
journal.close()
loaded = sorted(name for name in sys.modules if name.split(".")[0].startswith("psycopg"))
print(json.dumps({"statuses": statuses, "head": head, "psycopg": loaded}))
"""


def _rows(path: Path) -> Iterator[int]:
    journal = open_journal(path)
    try:
        for event in (pool_opened(), table_configured(), wager("r1-w1", "r1", 1)):
            yield journal.append(event).seq
    finally:
        journal.close()


def test_the_factory_chooses_each_backend_by_its_locations_scheme(tmp_path: Path) -> None:
    file = journal_location("var/journal.db", tmp_path)
    url = journal_location("postgresql://db.casino.example/journal")
    assert (location.scheme(file), location.scheme(url)) == ("sqlite", "postgresql")
    assert set(BACKENDS) == {"sqlite", "postgresql", "memory"}
    chosen = backend_for(file, LEDGER)
    assert isinstance(chosen, SqliteBackend)
    assert chosen.location == file
    database = backend_for(url, LEDGER)
    assert isinstance(database, PostgresBackend)
    assert database.location == DatabaseUrl("postgresql://db.casino.example/journal")
    memory = journal_location("memory://floor")
    assert location.scheme(memory) == "memory"
    assert type(backend_for(memory, LEDGER)).__name__ == "MemoryBackend"


def test_a_locations_folder_name_and_text_whatever_its_backend(tmp_path: Path) -> None:
    file = tmp_path / "var" / "journal.db"
    url = DatabaseUrl("postgresql://jackpotd:hunter2@db.casino.example/floor")
    assert (location.folder(file), location.name(file), location.text(file)) == (
        tmp_path / "var",
        "journal",
        file.as_posix(),
    )
    # A database has no folder of its own; its text keeps the password the configuration gave.
    assert (location.folder(url), location.name(url), location.text(url)) == (
        None,
        "floor",
        "postgresql://jackpotd:hunter2@db.casino.example/floor",
    )
    assert (location.sqlite_file(file), location.database(file)) == (file, None)
    assert (location.sqlite_file(url), location.database(url)) == (None, url)


def test_an_sqlite_journals_commands_and_start_up_never_import_psycopg(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    assert list(_rows(path)) == [1, 2, 3]
    done = subprocess.run(
        [sys.executable, "-c", SQLITE_ONLY, str(path), str(tmp_path / "demo.db"), str(free_port())],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"statuses": [0, 0, 0, 0], "head": 3, "psycopg": []}
