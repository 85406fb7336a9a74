"""docs/operations.md, "Actual against theoretical return": a month of play, reported as written.

A journal holds November 2026 at one table: 16 rounds a day, four seats each staking $1 on the
progressive and $5 on the Fortune Bonus, the hands dealt from a shuffled 53-card deck. The
section's commands run as they are written (the journal found through ``$JACKPOTD_DB``), and
their figures are held to the journal's own payouts table, read here with SQL: the stakes,
what came back, Envy apart, the pool beside its table, and the journal head the report names.
Ohio Adm. Code 3772-10-08(A): the verdict and the exit status agree.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.cli.month_of_play import (
    DAYS,
    DECK,
    ROUNDS_A_DAY,
    SEATS,
    documented,
    journal_month,
    month,
    run_line,
    seed_paytable,
)
from support.journal.journal_rig import POOL, TABLE

from controller.analyzer.report import Analyzer
from controller.events import RoundSettled, WagerLocked
from controller.rules.paytable_files import parse_paytable

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

SECTION = "### Actual against theoretical return"
THREE = 3


@pytest.fixture(scope="module")
def returns_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return journal_month(tmp_path_factory.mktemp("month") / "journal.db")


def _sql(returns_journal: Path, query: str, *values: str) -> int:
    with sqlite3.connect(f"file:{returns_journal}?mode=ro", uri=True) as connection:
        return int(connection.execute(query, values).fetchone()[0] or 0)


def _head(returns_journal: Path) -> tuple[int, str]:
    with sqlite3.connect(f"file:{returns_journal}?mode=ro", uri=True) as connection:
        seq, digest = connection.execute(
            "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    return int(seq), bytes(digest).hex()


def test_3772_10_08_a_the_months_returns_as_documented(
    returns_journal: Path, tmp_path: Path
) -> None:
    lines = documented(SECTION)
    assert len(lines) == 4
    results = [run_line(line, tmp_path, returns_journal) for line in lines]
    report = json.loads((tmp_path / "returns-2026-11.json").read_text())
    flagged = any(group["verdict"] == "REVIEW" for group in report["groups"])
    for result in results[:3]:
        assert result.returncode == (1 if flagged else 0), result.stderr
    assert results[3].returncode == 0, results[3].stderr  # the saved report is the journal's
    assert "made again from this journal, it is the same" in results[3].stdout
    seq, digest = _head(returns_journal)
    assert report["journal_head"] == {"seq": seq, "hash": digest}
    assert f"made from the journal's head: row {seq}, hash {digest}" in results[0].stdout

    groups = {(group.get("table") or group.get("pool"), group["spot"]): group
              for group in report["groups"]}  # fmt: skip
    wagers = DAYS * ROUNDS_A_DAY * SEATS
    progressive, bonus = groups[TABLE, "progressive"], groups[TABLE, "bonus"]
    assert (progressive["wagers"], progressive["staked_cents"]) == (wagers, wagers * 100)
    assert (bonus["wagers"], bonus["staked_cents"]) == (wagers, wagers * 500)
    assert groups[TABLE, "all"]["staked_cents"] == wagers * 600
    for spot, group in (("progressive", progressive), ("bonus", bonus)):
        paid = _sql(
            returns_journal,
            "SELECT sum(win_cents + returned_cents) FROM payouts "
            "WHERE kind NOT IN ('envy', 'void') AND spot = ?",
            spot,
        )
        assert group["paid_back_cents"] == paid
        assert Fraction(group["actual"]) == Fraction(paid, group["staked_cents"])
        assert group["paytables"] == [f"{'progressive' if spot == 'progressive' else 'fortune'}-1"]
        assert group["unanalyzed_wagers"] == 0
    pool = groups[POOL, "progressive"]
    assert {key: value for key, value in pool.items() if key != "pool"} == {
        key: value for key, value in progressive.items() if key != "table"
    }
    assert report["envy_paid_cents"] == {
        TABLE: _sql(returns_journal, "SELECT sum(win_cents) FROM payouts WHERE kind = 'envy'")
    }
    # The Fortune Bonus's theoretical needs no meter: it is the paytable's exact return.
    fortune = Analyzer().analyze(parse_paytable(seed_paytable("fortune-1"), "fortune-1"))
    assert Fraction(bonus["theoretical"]) == fortune.return_
    # The progressive's is above the seed's 48.483 %: it was played at meters above the seed.
    assert Fraction(progressive["theoretical"]) > Fraction(9341614, 19267885)

    rows = list(csv.DictReader(io.StringIO((tmp_path / "returns-2026-11.csv").read_text())))
    assert len(rows) == len(report["groups"])
    for row, group in zip(rows, report["groups"], strict=True):
        assert row["verdict"] == group["verdict"]
        assert int(row["paid_back_cents"]) == group["paid_back_cents"]
        assert row["theoretical"] == group["theoretical"]


def test_a_gaming_day_counts_that_days_rounds_only(returns_journal: Path, tmp_path: Path) -> None:
    result = run_line("jackpotd report returns --from 2026-11-05 --to 2026-11-05 --json", tmp_path,
                  returns_journal)  # fmt: skip
    report = json.loads(result.stdout)
    group = next(g for g in report["groups"] if g.get("table") == TABLE and g["spot"] == "all")
    assert group["staked_cents"] == ROUNDS_A_DAY * SEATS * 600
    assert group["wagers"] == ROUNDS_A_DAY * SEATS * 2
    # Sixteen rounds cannot tell anything from luck: no verdict past "within chance".
    assert {g["verdict"] for g in report["groups"]} <= {"ok", "within chance"}
    assert result.returncode == 0, result.stderr


def test_a_period_with_no_play_reports_no_group(returns_journal: Path, tmp_path: Path) -> None:
    result = run_line(
        "jackpotd report returns --from 2027-01-01 --to 2027-01-31", tmp_path, returns_journal
    )
    assert result.returncode == 0, result.stderr
    assert "journal rows: none" in result.stdout


def test_from_after_to_is_refused_in_one_line(returns_journal: Path, tmp_path: Path) -> None:
    result = run_line(
        "jackpotd report returns --from 2026-11-30 --to 2026-11-01", tmp_path, returns_journal
    )
    assert result.returncode != 0
    assert "--from 2026-11-30 is after --to 2026-11-01" in result.stderr
    assert "Traceback" not in result.stderr


def _saved(returns_journal: Path, folder: Path) -> Path:
    saved = folder / "returns.json"
    run_line(f"jackpotd report returns --json > {saved}", folder, returns_journal)
    return saved


def test_an_edited_report_fails_verify_naming_the_figure(days: Path, tmp_path: Path) -> None:
    saved = _saved(days, tmp_path)
    report = json.loads(saved.read_text())
    report["groups"][0]["paid_back_cents"] += 100_00
    del report["groups"][1]
    saved.write_text(json.dumps(report))
    result = run_line(f"jackpotd verify --report {saved}", tmp_path, days)
    assert result.returncode == 1
    assert "groups: 3 entries, the journal's 4" in result.stderr
    report = json.loads(_saved(days, tmp_path).read_text())
    report["groups"][0]["paid_back_cents"] += 100_00
    saved.write_text(json.dumps(report))
    result = run_line(f"jackpotd verify --report {saved}", tmp_path, days)
    assert result.returncode == 1
    assert "groups.0.paid_back_cents: the report says" in result.stderr


def test_a_report_holds_as_the_journal_grows_and_not_against_another(
    days: Path, tmp_path: Path
) -> None:
    saved = _saved(days, tmp_path)
    events = list(month(THREE))
    late = "2026-12-01T09:00:00+00:00"
    grown = journal_month(tmp_path / "grown.db", [
        *events,
        WagerLocked("late-1", late, TABLE, "late", 1, "progressive", 100),
        RoundSettled("late-s", late, TABLE, "late", DECK[:7], {"1": DECK[7:14]}),
    ])  # fmt: skip
    last = events[-1]
    assert isinstance(last, RoundSettled)
    # The same rounds, but the last one's dealer and seat 1 swap hands: another journal.
    swapped = msgspec.structs.replace(
        last, dealer=last.hands["1"], hands={**last.hands, "1": last.dealer}
    )
    other = journal_month(tmp_path / "other.db", [*events[:-1], swapped])
    result = run_line(f"jackpotd verify --report {saved} --db {grown}", tmp_path, days)
    assert result.returncode == 0, result.stderr
    result = run_line(f"jackpotd verify --report {saved} --db {other}", tmp_path, days)
    assert result.returncode == 1
    assert "made from another journal, or this one was rewritten" in result.stderr


def test_a_file_that_is_no_report_is_refused_in_one_line(days: Path, tmp_path: Path) -> None:
    for text in ("not json", '{"report": "something else"}'):
        (tmp_path / "bad.json").write_text(text)
        result = run_line("jackpotd verify --report bad.json", tmp_path, days)
        assert result.returncode != 0
        assert "bad.json: not a report" in result.stderr
        assert "Traceback" not in result.stderr
