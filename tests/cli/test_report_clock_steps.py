"""Reports and ``verify`` around a clock step (docs/faults.md, "Clock steps").

A real journal file in which the controller's clock ran a minute fast over midnight and was
stepped back: a wager dated 00:00:30 on the second day is journaled *before* one dated
23:59:50 on the first. A period is a run of journal rows, so each wager is in exactly one
daily report, both days balance, and the second day's opening is the first day's closing.
Dated by time alone, the 23:59:50 wager would fall in the first day after the second day
had begun: its contribution counted in neither day, and the second day's opening meter taken
from a row in the middle of the day.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import POOL, TABLE, opened_journal
from support.runtime.controller_keys import write_controller_key

from controller.cli import main
from controller.events import FaultRecorded, WagerLocked
from controller.journal.checkpoints import seal
from controller.ledger_journal.sqlite import verify

if TYPE_CHECKING:
    from pathlib import Path

STEP = (
    "the wall clock stepped back 60.000 s: it reads 2026-11-29T23:59:45.000Z where "
    "2026-11-30T00:00:45.000Z was due; events keep their journal order (seq)"
)


def wager(number: int, at: str) -> WagerLocked:
    return WagerLocked(f"w{number}", at, TABLE, "r1", number, "progressive", 100)


@pytest.fixture
def stepped(tmp_path: Path) -> Path:
    """Wagers 1 to 4 in journal order; the clock stepped back 60 s between wagers 2 and 3."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager(1, "2026-11-29T23:59:00.000Z"))
        journal.append(wager(2, "2026-11-30T00:00:30.000Z"))  # the clock is a minute fast
        journal.append(
            FaultRecorded("step", "2026-11-29T23:59:45.000Z", "clock", "clock-step", STEP)
        )
        journal.append(wager(3, "2026-11-29T23:59:50.000Z"))  # dated the day before
        journal.append(wager(4, "2026-11-30T00:01:00.000Z"))
    return path


def report(capsys: pytest.CaptureFixture[str], path: Path, *period: str) -> dict[str, object]:
    status = main(["report", *period, "--db", str(path), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert status == 0, document
    assert isinstance(document, dict)
    return document


def pool(document: dict[str, object]) -> dict[str, dict[str, str]]:
    pools = document["pools"]
    assert isinstance(pools, list)
    (found,) = pools
    assert isinstance(found, dict)
    assert found["pool"] == POOL
    assert found["balanced"] is True
    return found


def test_daily_reports_across_a_backward_step_cover_every_wager_once_and_balance(
    stepped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = report(capsys, stepped)
    first = report(capsys, stepped, "--from", "2026-11-29", "--to", "2026-11-29")
    second = report(capsys, stepped, "--from", "2026-11-30", "--to", "2026-11-30")
    per_wager = Fraction(113, 4)  # 28.25 % of $1
    assert Fraction(pool(whole)["contributions"]["meter"]) == 4 * per_wager
    # Day one ends where the journal first reaches day two (wager 2): wager 1 only.
    assert Fraction(pool(first)["contributions"]["meter"]) == per_wager
    # Day two is every row from there on, wager 3 (dated day one) included.
    assert Fraction(pool(second)["contributions"]["meter"]) == 3 * per_wager
    assert pool(second)["opening"] == pool(first)["closing"]
    assert pool(second)["closing"] == pool(whole)["closing"]
    # The report says which rows it covers and that the clock stepped among them.
    assert first["rows"] == {"first_seq": 3, "last_seq": 3, "clock_steps": [], "dated_back": 0}
    assert second["rows"] == {
        "first_seq": 4,
        "last_seq": 7,
        "clock_steps": [f"row 5 at 2026-11-29T23:59:45.000Z: {STEP}"],
        "dated_back": 1,
    }


def test_a_report_whose_end_falls_inside_the_step_still_covers_rows_in_journal_order(
    stepped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """To 23:59:55 on day one: the period stops at wager 2, though wager 3 is dated earlier."""
    until = report(capsys, stepped, "--to", "2026-11-29T23:59:55Z")
    after = report(capsys, stepped, "--from", "2026-11-29T23:59:55.001Z")
    assert until["rows"]["last_seq"] == 3  # type: ignore[index]
    assert after["rows"]["first_seq"] == 4  # type: ignore[index]
    assert pool(after)["opening"] == pool(until)["closing"]


@pytest.mark.usefixtures("zone")  # America/New_York
def test_the_text_report_names_the_rows_and_the_clock_step_in_local_time(
    stepped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--from", "2026-11-30", "--db", str(stepped)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Reconciliation from 2026-11-29 19:00:00 EST to now"
    assert "journal rows 4 to 7" in out
    assert "rows dated earlier than the row before them: 1;" in out
    assert "clock step, row 5 at 2026-11-29 18:59:45 EST: the wall clock stepped back 60" in out


def test_a_period_that_ends_before_it_starts_is_refused(
    stepped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--from", "2026-11-30", "--to", "2026-11-29", "--db", str(stepped)]) == 1
    assert "is after --to" in capsys.readouterr().err


def test_verify_accepts_times_that_go_back_and_replays_every_row(stepped: Path) -> None:
    result = verify(stepped)
    assert result.ok, result.problems
    assert result.rows == 7
    assert result.pools[POOL] == 1_000_000 + 113  # four wagers of 28.25 cents, to the cent


def test_a_checkpoint_dated_after_the_rows_journaled_behind_it_is_no_clock_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint is dated when it is signed, after the row it covers: 3 ms is not a step.

    As the sequencer journals it: wager 2 was dated at 00:00:00.002 as it came in, the
    checkpoint of the row before it signed at .005, and journaled first. Only a row dated more
    than the clock watch's 1 ms earlier than the (non-checkpoint) row before it counts.
    """
    path = tmp_path / "journal.db"
    key = write_controller_key(tmp_path)
    with opened_journal(path) as journal:
        journal.append(wager(1, "2026-11-30T00:00:00.000Z"))
        sealed = seal(
            key,
            "c1",
            journal.state,
            journal.head,
            "2026-11-30T00:00:00.005Z",
            domain=journal.domain,
        )
        journal.append_many([sealed.event], snapshot=sealed)
        journal.append(wager(2, "2026-11-30T00:00:00.002Z"))
        journal.append(wager(3, "2026-11-30T00:00:00.001Z"))  # 1 ms: the resolution of at
    assert report(capsys, path, "--from", "2026-11-30")["rows"]["dated_back"] == 0  # type: ignore[index]
    assert main(["report", "--from", "2026-11-30", "--db", str(path)]) == 0
    assert "the clock stepped" not in capsys.readouterr().out

    with opened_journal(path) as journal:
        journal.append(wager(4, "2026-11-29T23:59:59.998Z"))  # 3 ms before wager 3: a step
    assert report(capsys, path)["rows"]["dated_back"] == 1  # type: ignore[index]
