"""``jackpotd run`` on a PostgreSQL journal: refused in one line until approved, then it serves.

The configuration names the test server's database (``[controller] journal = "postgresql://..."``);
the site's authority is signed and the installed software approved in it. The service refuses
the unapproved configuration in one line that gives the approval command with ``--db`` and the
URL; the manager runs that command; the service then starts, serves, drains on SIGTERM and
leaves a journal that verifies. A configuration naming a database of other tables is refused
in one line before anything starts, and the database is left as it was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from support.deploy.software_rig import approve_manifest
from support.journal.twin_journals import database_fingerprint, write_config
from support.ledger.approvals import PASSPHRASE, Site

from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import PostgresJournal

if TYPE_CHECKING:
    from collections.abc import Mapping

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60


def _on_database(folder: Path, url: str) -> Path:
    """support.journal.twin_journals' configuration, its journal the database at ``url``."""
    config = write_config(folder)
    config.write_text(config.read_text().replace('journal = "journal.db"', f'journal = "{url}"'))
    return config


def _jackpotd(*argv: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=ROOT,
        stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip


@pytest.mark.slow
def test_run_on_a_database_refuses_an_unapproved_configuration_then_serves_once_approved(
    tmp_path: Path, postgres_url: str
) -> None:
    config = _on_database(tmp_path, postgres_url)
    with PostgresJournal(DatabaseUrl(postgres_url)) as journal:
        site = Site.create(journal)  # the port, as on the file
        approve_manifest(site, config, os.environ | {"PYTHONPATH": str(ROOT)})
    manager = site.key_file("mgr", tmp_path)
    refused = _jackpotd("run", "--config", str(config))
    assert (refused.returncode, refused.stdout) == (1, "")
    (line,) = [line for line in refused.stderr.splitlines() if line.startswith("jackpotd: ")]
    assert line == (
        f"jackpotd: {config}: the configuration changes 2 pools or tables, or its authority "
        "settings, and no manager has approved it: "
        f"jackpotd config approve --config {config} --key KEY_FILE --db {postgres_url}"
    )
    approve = _jackpotd(
        "config", "approve", "--config", str(config), "--key", str(manager), "--db", postgres_url,
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr
    started = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert started.stdout is not None
        assert "meter display and /metrics at" in started.stdout.readline()
        started.send_signal(signal.SIGTERM)
        started.wait(timeout=WAIT_S)
    finally:
        if started.poll() is None:
            started.kill()
            started.wait(timeout=WAIT_S)
    assert started.returncode == 0, started.stderr.read() if started.stderr else ""
    verified = _jackpotd("verify", "--db", postgres_url, "--json")
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["ok"] is True
    meters = json.loads(_jackpotd("meters", "--db", postgres_url, "--json").stdout)
    assert [pool["pool"] for pool in meters["pools"]] == ["P1"]


def test_run_on_a_database_of_other_tables_is_refused_in_one_line_before_anything_starts(
    tmp_path: Path, postgres_url: str
) -> None:
    config = _on_database(tmp_path, postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("CREATE TABLE chips (colour TEXT)")
    before = database_fingerprint(postgres_url)
    refused = _jackpotd("run", "--config", str(config))
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.endswith(
        f"jackpotd: {postgres_url}: not a jackpotd journal (the database holds chips)\n"
    )
    assert "Traceback" not in refused.stderr
    assert database_fingerprint(postgres_url) == before
