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
import os
import random
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal_rig import POOL, TABLE, pool_opened

from controller.analyzer.report import Analyzer
from controller.events import AnyEvent, RoundSettled, TableConfigured, WagerLocked
from controller.journal import Journal
from controller.rules.paytable_files import parse_paytable

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
SECTION = "### Actual against theoretical return"
DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"] + ["Jk"]
ROUNDS_A_DAY, SEATS, DAYS = 16, 4, 30
NOVEMBER = datetime(2026, 11, 1, 8, tzinfo=UTC)


def _paytable(name: str) -> str:
    return (files("controller") / "paytables" / f"{name}.toml").read_text()


def _month() -> Iterator[AnyEvent]:
    opened = pool_opened()
    yield msgspec.structs.replace(opened, at="2026-10-31T12:00:00Z")
    yield TableConfigured(
        "table-1", "2026-10-31T12:00:00Z", TABLE,
        {"progressive-1": _paytable("progressive-1"), "fortune-1": _paytable("fortune-1")},
        progressive="progressive-1", bonus="fortune-1", pool_id=POOL, envy_includes_dealer=False,
    )  # fmt: skip
    shuffler = random.Random(20261101)  # noqa: S311 - dealing the test's hands
    for day in range(DAYS):
        for number in range(ROUNDS_A_DAY):
            at = (NOVEMBER + timedelta(days=day, minutes=30 * number)).isoformat()
            round_id = f"d{day + 1}-r{number + 1}"
            for seat in range(1, SEATS + 1):
                yield WagerLocked(
                    f"{round_id}-p{seat}", at, TABLE, round_id, seat, "progressive", 100
                )
                yield WagerLocked(f"{round_id}-b{seat}", at, TABLE, round_id, seat, "bonus", 500)
            cards = shuffler.sample(DECK, 7 * (SEATS + 1))
            hands = {str(seat): cards[7 * seat : 7 * seat + 7] for seat in range(1, SEATS + 1)}
            yield RoundSettled(f"{round_id}-settle", at, TABLE, round_id, cards[:7], hands)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("month") / "journal.db"
    events = list(_month())
    with Journal(path) as opened:
        for start in range(0, len(events), 500):
            receipts = opened.append_many(events[start : start + 500])
            assert all(receipt.applied for receipt in receipts), [
                receipt for receipt in receipts if not receipt.applied
            ][:1]
    return path


def _documented() -> list[str]:
    section = PAGE.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n#", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def _run(line: str, folder: Path, journal: Path) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {
        "JACKPOTD_DB": str(journal),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TZ": "UTC",
    }
    return subprocess.run(  # noqa: S602 - the documented line, as an operator types it
        line, shell=True, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )


def _sql(journal: Path, query: str, *values: str) -> int:
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as connection:
        return int(connection.execute(query, values).fetchone()[0] or 0)


def _head(journal: Path) -> tuple[int, str]:
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as connection:
        seq, digest = connection.execute(
            "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    return int(seq), bytes(digest).hex()


def test_3772_10_08_a_the_months_returns_as_documented(journal: Path, tmp_path: Path) -> None:
    lines = _documented()
    assert len(lines) == 4
    results = [_run(line, tmp_path, journal) for line in lines]
    report = json.loads((tmp_path / "returns-2026-11.json").read_text())
    flagged = any(group["verdict"] == "REVIEW" for group in report["groups"])
    for result in results[:3]:
        assert result.returncode == (1 if flagged else 0), result.stderr
    assert results[3].returncode == 0, results[3].stderr  # the saved report is the journal's
    assert "made again from this journal, it is the same" in results[3].stdout
    seq, digest = _head(journal)
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
            journal,
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
        TABLE: _sql(journal, "SELECT sum(win_cents) FROM payouts WHERE kind = 'envy'")
    }
    # The Fortune Bonus's theoretical needs no meter: it is the paytable's exact return.
    fortune = Analyzer().analyze(parse_paytable(_paytable("fortune-1"), "fortune-1"))
    assert Fraction(bonus["theoretical"]) == fortune.return_
    # The progressive's is above the seed's 48.483 %: it was played at meters above the seed.
    assert Fraction(progressive["theoretical"]) > Fraction(9341614, 19267885)

    rows = list(csv.DictReader(io.StringIO((tmp_path / "returns-2026-11.csv").read_text())))
    assert len(rows) == len(report["groups"])
    for row, group in zip(rows, report["groups"], strict=True):
        assert row["verdict"] == group["verdict"]
        assert int(row["paid_back_cents"]) == group["paid_back_cents"]
        assert row["theoretical"] == group["theoretical"]


def test_a_gaming_day_counts_that_days_rounds_only(journal: Path, tmp_path: Path) -> None:
    result = _run("jackpotd report returns --from 2026-11-05 --to 2026-11-05 --json", tmp_path,
                  journal)  # fmt: skip
    report = json.loads(result.stdout)
    group = next(g for g in report["groups"] if g.get("table") == TABLE and g["spot"] == "all")
    assert group["staked_cents"] == ROUNDS_A_DAY * SEATS * 600
    assert group["wagers"] == ROUNDS_A_DAY * SEATS * 2
    # Sixteen rounds cannot tell anything from luck: no verdict past "within chance".
    assert {g["verdict"] for g in report["groups"]} <= {"ok", "within chance"}
    assert result.returncode == 0, result.stderr


def test_a_period_with_no_play_reports_no_group(journal: Path, tmp_path: Path) -> None:
    result = _run("jackpotd report returns --from 2027-01-01 --to 2027-01-31", tmp_path, journal)
    assert result.returncode == 0, result.stderr
    assert "journal rows: none" in result.stdout


def test_from_after_to_is_refused_in_one_line(journal: Path, tmp_path: Path) -> None:
    result = _run("jackpotd report returns --from 2026-11-30 --to 2026-11-01", tmp_path, journal)
    assert result.returncode != 0
    assert "--from 2026-11-30 is after --to 2026-11-01" in result.stderr
    assert "Traceback" not in result.stderr


def _saved(journal: Path, folder: Path) -> Path:
    saved = folder / "returns.json"
    line = f"jackpotd report returns --from 2026-11-01 --to 2026-11-30 --json > {saved}"
    _run(line, folder, journal)
    return saved


def test_an_edited_report_fails_verify_naming_the_figure(journal: Path, tmp_path: Path) -> None:
    saved = _saved(journal, tmp_path)
    report = json.loads(saved.read_text())
    report["groups"][0]["paid_back_cents"] += 100_00
    saved.write_text(json.dumps(report))
    result = _run(f"jackpotd verify --report {saved}", tmp_path, journal)
    assert result.returncode == 1
    assert "groups.0.paid_back_cents: the report says" in result.stderr
    del report["groups"][1]
    saved.write_text(json.dumps(report))
    result = _run(f"jackpotd verify --report {saved}", tmp_path, journal)
    assert result.returncode == 1
    assert "groups: 3 entries, the journal's 4" in result.stderr


def test_a_report_holds_as_the_journal_grows_and_not_against_another(
    journal: Path, tmp_path: Path
) -> None:
    saved = _saved(journal, tmp_path)
    grown = tmp_path / "grown.db"
    other = tmp_path / "other.db"
    events = list(_month())
    with Journal(grown) as opened:
        opened.append_many(events)
        late = "2026-12-01T09:00:00+00:00"
        opened.append(WagerLocked("late-1", late, TABLE, "late", 1, "progressive", 100))
        opened.append(RoundSettled("late-s", late, TABLE, "late", DECK[:7], {"1": DECK[7:14]}))
    with Journal(other) as opened:
        opened.append_many(events[:-1])  # the same month but its last round's settlement
    result = _run(f"jackpotd verify --report {saved} --db {grown}", tmp_path, journal)
    assert result.returncode == 0, result.stderr
    result = _run(f"jackpotd verify --report {saved} --db {other}", tmp_path, journal)
    assert result.returncode == 1
    assert "the report was not made from it" in result.stderr or "another journal" in result.stderr


def test_a_file_that_is_no_report_is_refused_in_one_line(journal: Path, tmp_path: Path) -> None:
    for text in ("not json", '{"report": "something else"}'):
        (tmp_path / "bad.json").write_text(text)
        result = _run("jackpotd verify --report bad.json", tmp_path, journal)
        assert result.returncode != 0
        assert "bad.json: not a report" in result.stderr
        assert "Traceback" not in result.stderr
