"""deploy/wide-area/lab runs as its README says: make-lab.sh, lab.sh approve, start, status, stop.

The lab is made in a test folder and moved to free ports (tests/support/widearea/wide_area_lab.py);
everything else is the shipped files and scripts, with this checkout's jackpotd. Once started,
central's own report (``jackpotd report sites --json``) must show each property's chain
applied and its totals reconciled: every message of the link went through central's broker,
its TLS listener and its ACL, from the properties' uplinks to central and back.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import TYPE_CHECKING, Any

from support.widearea.wide_area_lab import LAB, SITES, InstalledLab, make_lab, on_free_ports

if TYPE_CHECKING:
    from pathlib import Path

LINKED_S = 90.0
"""The longest both properties may take to be applied and reconciled at central."""


def lab_sh(lab: InstalledLab, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", str(LAB / "lab.sh"), command, str(lab.directory)],
        check=False,
        capture_output=True,
        text=True,
        env=lab.environment(),
        timeout=300,
    )


def report(lab: InstalledLab) -> dict[str, Any]:
    """Central's ``jackpotd report sites --json``, by property."""
    done = subprocess.run(
        [str(lab.jackpotd), "report", "sites", "--json", "--config", str(lab.config("central"))],
        check=False,
        capture_output=True,
        text=True,
        env=lab.environment(),
        timeout=60,
    )
    assert done.returncode in {0, 1}, done.stderr
    found: Any = json.loads(done.stdout)
    return {row["site"]: row for row in found["sites"]}


def linked(row: dict[str, Any]) -> bool:
    reconciliation = row.get("last_reconciliation") or {}
    return bool(row["contributions"] > 0 and reconciliation.get("matched") and not row["halted"])


def test_the_lab_links_both_properties_to_central_through_its_broker_and_acl(
    tmp_path: Path,
) -> None:
    lab, made = make_lab(tmp_path / "lab")
    assert made.returncode == 0, made.stderr
    on_free_ports(lab)
    approved = lab_sh(lab, "approve")
    assert approved.returncode == 0, approved.stdout + approved.stderr
    try:
        started = lab_sh(lab, "start")
        assert started.returncode == 0, started.stdout + started.stderr
        deadline = time.monotonic() + LINKED_S
        rows = report(lab)
        while not all(site in rows and linked(rows[site]) for site in SITES):
            assert time.monotonic() < deadline, f"not linked after {LINKED_S:g} s: {rows}"
            time.sleep(0.5)  # central's journal announces nothing to another process: ask again
            rows = report(lab)
        status = lab_sh(lab, "status")
        assert status.returncode == 0, status.stdout + status.stderr
        for name in ("jackpotd-central", "jackpotd-atlantic", "mosquitto-central"):
            assert f"{name}: running" in status.stdout
        assert "taking messages" in status.stdout
    finally:
        stopped = lab_sh(lab, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert "jackpotd-central: stopped" in stopped.stdout
    assert "mosquitto-central: stopped" in stopped.stdout
