"""The command line's tables: headers always; drawn on a terminal, tab-separated when piped.

On a terminal (a real pseudo-terminal here) a table is drawn by rich with its column headers;
piped, it is the header line and one tab-separated row a line, which ``cut`` and ``awk`` read;
``--json`` stays exact JSON. Times are local, with the zone (``2026-11-29 10:00:00 EST`` for
15:00 UTC in New York); ``--json`` keeps the journal's UTC.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli.cli_runs import run
from support.cli.terminal import on_a_terminal
from support.journal.pay_history import pays_journal

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60


@pytest.fixture
def tables_journal(tmp_path: Path) -> Path:
    return pays_journal(tmp_path / "journal.db")


def test_a_table_on_a_terminal_is_drawn_with_its_headers(tables_journal: Path) -> None:
    status, drawn, _ = on_a_terminal(
        "hits", "--kind", "all", "--db", str(tables_journal), stdout_too=True,
        env={"TZ": "America/New_York", "COLUMNS": "160"},
    )  # fmt: skip
    assert status == 0
    lines = drawn.splitlines()
    (header,) = [line for line in lines if "pay" in line and "amount" in line]
    assert [cell.strip() for cell in header.strip("┃ \r").split("┃")] == [
        "pay", "time", "table", "seat", "what", "line", "amount", "status", "pool", "tax",
    ]  # fmt: skip
    (jackpot,) = [line for line in lines if "R1/1/progressive" in line]
    assert "2026-11-29 10:00:00 EST" in jackpot
    assert "$1,000.08" in jackpot
    assert "│" in jackpot


@pytest.mark.usefixtures("zone")
def test_piped_a_table_is_its_header_and_tab_separated_rows(
    tables_journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "hits", "--kind", "all", "--db", str(tables_journal))
    assert status == 0
    header, *rows = [line.split("\t") for line in out.splitlines()]
    assert header[:2] == ["pay", "time"]
    assert all(len(row) == len(header) for row in rows)
    jackpot = dict(
        zip(header, next(row for row in rows if row[0] == "R1/1/progressive"), strict=True)
    )
    assert jackpot == {
        "pay": "R1/1/progressive", "time": "2026-11-29 10:00:00 EST", "table": "T1", "seat": "1",
        "what": "jackpot", "line": "five-aces", "amount": "$1,000.08", "status": "PENDING",
        "pool": "P1", "tax": "report",
    }  # fmt: skip


@pytest.mark.usefixtures("zone")
def test_json_keeps_the_journals_utc_times(
    tables_journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "hits", "--json", "--db", str(tables_journal))
    assert status == 0
    (jackpot,) = json.loads(out)["pays"]
    assert jackpot["at"] == "2026-11-29T15:00:00Z"
    assert jackpot["win_cents"] == 100_008


@pytest.mark.usefixtures("zone")
def test_every_table_has_its_header_line_when_piped(
    tables_journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first_lines = {
        ("paytables",): "paytable\twager\tjoker\tkind\ttitle",
        ("meters", "--db", str(tables_journal)): "pool\tP1",
        ("operator", "list", "--db", str(tables_journal)): "no operators enrolled",
        (
            "hits",
            "--db",
            str(tables_journal),
        ): "pay\ttime\ttable\tseat\twhat\tline\tamount\tstatus\tpool\ttax",
    }
    for argv, first in first_lines.items():
        status, out, _ = run(capsys, *argv)
        assert status == 0, argv
        assert out.splitlines()[0] == first, argv
    status, out, _ = run(capsys, "report", "--db", str(tables_journal))
    assert status == 0
    (header,) = [line for line in out.splitlines() if line.startswith("pool\taccount\t")]
    assert header.split("\t")[-2:] == ["closing", "balanced"]
    rows = [line.split("\t") for line in out.splitlines() if line.startswith("P1\t")]
    assert [row[1] for row in rows] == ["meter", "reserve", "overflow"]
    assert {row[-1] for row in rows} == {"yes"}
    status, out, _ = run(capsys, "paytables", "show", "fortune-1")
    assert "outcome\tpays\tenvy\tline" in out.splitlines()


@pytest.mark.usefixtures("zone")
def test_report_times_are_local_with_the_zone(
    tables_journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "report", "--from", "2026-11-30", "--db", str(tables_journal))
    assert status == 0
    assert out.splitlines()[0] == "Reconciliation from 2026-11-29 19:00:00 EST to now"
