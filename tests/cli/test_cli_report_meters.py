"""docs/operations.md, "The regulators' meters": a month's meters, reported as written.

On the month of tests/support/cli/month_of_play.py, the section's commands run as they are written;
the figures are held to the journal's own tables read here with SQL (its pools' exact state and
its payouts), N.J.A.C. 13:69E-1.39A(b)'s meters and 9 NYCRR 5320.8's last hits, and the saved
JSON is checked by ``jackpotd verify --report`` and refused once edited.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

import pytest
from support.cli.month_of_play import DAYS, ROUNDS_A_DAY, SEATS, documented, journal_month, run_line
from support.journal.journal_rig import POOL, TABLE

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

SECTION = "### The regulators' meters"


@pytest.fixture(scope="module")
def meters_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return journal_month(tmp_path_factory.mktemp("month") / "journal.db")


def _query(meters_journal: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{meters_journal}?mode=ro", uri=True) as connection:
        return connection.execute(query).fetchall()


def test_13_69e_1_39a_b_the_months_meters_as_documented(
    meters_journal: Path, tmp_path: Path
) -> None:
    lines = documented(SECTION)
    assert len(lines) == 3
    results = [run_line(line, tmp_path, meters_journal) for line in lines]
    for result in results:
        assert result.returncode == 0, result.stderr
    assert "made again from this journal, it is the same" in results[2].stdout
    report = json.loads((tmp_path / "meters-2026-11.json").read_text())
    (pool,) = report["pools"]
    wagers = DAYS * ROUNDS_A_DAY * SEATS
    assert (pool["pool"], pool["qualifying_wagers"], pool["wagered_cents"]) == (
        POOL, wagers, wagers * 100,
    )  # fmt: skip
    hits = _query(
        meters_journal,
        "SELECT payout_id, table_id, seat, line, from_meter_cents FROM payouts "
        "WHERE from_meter_cents > 0 ORDER BY seq DESC, payout_id",
    )
    assert pool["hits"] == len(hits)
    assert pool["won_cents"] == sum(int(str(hit[4])) for hit in hits)
    assert [
        (hit["payout_id"], hit["table"], hit["seat"], hit["line"], hit["paid_cents"])
        for hit in pool["last_hits"]
    ] == [tuple(hit) for hit in hits[:25]]
    (table,) = report["tables"]
    assert (table["table"], table["wagers"]) == (TABLE, 2 * wagers)
    assert table["wagered_cents"] == wagers * 600
    assert "The last" in results[0].stdout
    assert f"{POOL}" in results[0].stdout


def test_an_edited_meters_report_fails_verify(meters_journal: Path, tmp_path: Path) -> None:
    saved = tmp_path / "meters.json"
    run_line(f"jackpotd report meters --json > {saved}", tmp_path, meters_journal)
    report = json.loads(saved.read_text())
    report["pools"][0]["closing"]["meter"] = "1"
    saved.write_text(json.dumps(report))
    result = run_line(f"jackpotd verify --report {saved}", tmp_path, meters_journal)
    assert result.returncode == 1
    assert "pools.0.closing.meter: the report says '1'" in result.stderr
