"""``jackpotd demo`` and ``jackpotd verify`` on a PostgreSQL journal (docs/ha.md).

The demo is the whole service on simulated tables; given ``--db postgresql://...`` it keeps
its journal in that database (a real server, tests/support/journal/postgres.py) and no SQLite file
is made. A second run starts on what the first left: the start-up check replays it (the demo's
checkpoints are signed with a key of its run). ``jackpotd verify`` checks the database's chain,
replay and checkpoints as it checks a file, and names an edit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from support.cli.cli_runs import run
from support.drivers.mosquitto import free_port

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]


def demo(folder: Path, url: str, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "demo", "--tables", "2", "--no-levels", "--db", url,
         "--port", str(free_port()), "--interval", "0.001", *argv],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_demo_keeps_its_journal_in_postgresql_and_starts_again_on_it(
    tmp_path: Path, postgres_url: str
) -> None:
    first = demo(tmp_path, postgres_url, "--rounds", "10", "--hit-every", "5")
    assert "rounds: 20 (T1 10, T2 10)" in first
    assert "progressive hits: 4 " in first
    assert f"check it with: jackpotd verify --db {postgres_url})" in first
    second = demo(tmp_path, postgres_url, "--rounds", "3", "--hit-every", "0")
    assert "rounds: 6 (T1 3, T2 3)" in second
    assert "progressive hits: 0 " in second
    with psycopg.connect(postgres_url) as connection:
        (rows,) = connection.execute("SELECT count(*) FROM journal").fetchone() or (0,)
    assert rows > 200
    # No SQLite journal anywhere: only the demo manager's key, named after the database.
    database = postgres_url.rsplit("/", 1)[1]
    made = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    assert made == ["var", f"var/{database}.manager.key"]


def test_verify_checks_a_postgresql_journal_and_names_an_edited_row(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    demo(tmp_path, postgres_url, "--rounds", "4", "--hit-every", "2")
    status, out, err = run(capsys, "verify", "--db", postgres_url, "--json")
    assert (status, err) == (0, "")
    report = json.loads(out)
    assert report["ok"]
    assert report["rows"] == report["head"]["seq"] > 100
    # One at the start, covering the takeover row the demo's node journaled first (docs/ha.md,
    # "Takeovers in the journal"), and one at the clean stop.
    assert report["checkpoints"] == 2
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        # Someone with the database's password moves a row's time back a year.
        connection.execute("UPDATE journal SET at = replace(at, '2026-', '2025-') WHERE seq = 40")
    status, out, err = run(capsys, "verify", "--db", postgres_url)
    assert status == 1
    assert err.startswith(
        f"journal FAILED verification ({postgres_url}):\n"
        "  row 40: the row's contents do not match its hash\n"
    )


def test_verify_with_archives_of_a_database_holding_no_journal_says_so(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Archives of a PostgreSQL journal verify as the file's do (tests/journal/
    # test_postgres_archive.py); an empty database is no journal to verify, with or without.
    status, _, err = run(capsys, "verify", "--db", postgres_url, "--archives", str(tmp_path))
    assert status == 1
    assert err == (
        f"jackpotd: {postgres_url}: no such journal (the database holds no journal tables)\n"
    )
