"""``jackpotd run`` refuses to start without an approved manifest; only the demo is exempt.

docs/operations.md, "Approving the software": the self-check compares what is installed with
what a manager approved, so a journal in which nothing was approved cannot start the service.
The refusal is one line saying how to approve, and a fault in the journal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from support.deploy.software_rig import ROOT, WAIT_S, free_port, serves_and_stops, write_config
from support.ledger.approvals import PASSPHRASE, Site

from controller.config.load import load_config
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path


def run(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip


@pytest.mark.slow
def test_run_refuses_to_start_without_an_approved_manifest(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal)
        site.approve(load_config(config))  # the configuration, not the software
        manager_key = site.key_file("mgr", tmp_path)
    refused = run(config)
    out, err = refused.communicate(timeout=WAIT_S)
    assert refused.returncode == 1
    assert out == ""
    assert err.splitlines()[-1] == (
        f"jackpotd: start-up self-check failed: no approved manifest in {database} "
        f"(a manager approves what is installed with jackpotd manifest approve --config {config} "
        f"--db {database} --key KEY_FILE; docs/operations.md)"
    )
    with Journal(database) as journal:
        faults = [row["event"] for row in journal.rows() if row["kind"] == "fault"]
        assert journal.state.manifest is None
    assert any("no approved manifest" in fault for fault in faults)

    # The manager approves as the error says; then it starts.
    approve = subprocess.run(
        [sys.executable, "-m", "controller", "manifest", "approve", "--config", str(config),
         "--key", str(manager_key), "--db", str(database)],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=ROOT,
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr
    serves_and_stops(config, ROOT)


def test_the_demo_needs_no_approved_manifest(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "demo", "--rounds", "2", "--tables", "1",
         "--interval", "0.02", "--db", str(tmp_path / "demo.db"), "--port", str(free_port())],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "rounds: 4 (T1 2, T2 2)" in done.stdout.splitlines()
    with Journal(tmp_path / "demo.db") as journal:
        assert journal.state.manifest is None
