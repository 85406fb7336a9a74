"""Each reveal in the report is checked as anyone checks it: a reveal that lies does not check.

docs/rules.md § 10: the trigger and nonce open the commitment, the trigger lies in the level's
range, and the hit is the first contribution since the draw to reach it
(controller/mystery/core.py ``hit_holds``, which controller/reports/mystery_draws.py runs over
the journal's rows). The rows of a real journal (tests/support/journal/mystery_journal.py) are
edited here in memory, as a journal edited after the fact would read, and each lie is named; then
the file itself is edited, and ``jackpotd report`` says so and exits 1.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
from support.cli.cli_runs import run
from support.journal.mystery_journal import GRAND, MysteryJournal, mystery_journal

from controller.cli.report_mystery import reveal_rows, unchecked
from controller.ledger_journal.sqlite import Journal
from controller.reports.mystery_draws import levels_document, mystery_draws

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture
def late(tmp_path: Path) -> MysteryJournal:
    """A journal whose first draw was reached by its third wager or later, then hit once more."""
    for attempt in range(50):  # a draw is reached by the first or second wager about 1 in 2
        floor_ = mystery_journal(tmp_path / f"journal-{attempt}.db")
        floor_.draw()
        floor_.until_hits(1)
        if len(floor_.wagers) >= 3:
            floor_.until_hits(2)
            floor_.journal.close()
            return floor_
        floor_.journal.close()
    raise AssertionError("every first draw hit at once")  # pragma: no cover


def journal_rows(path: Path) -> list[dict[str, Any]]:
    with Journal(path) as journal:
        return sorted(journal.rows(), key=lambda row: int(row["seq"]))


def edited(rows: list[dict[str, Any]], seq: int, column: str, edit: Callable[[Any], None]) -> None:
    """Row ``seq``'s ``column`` (JSON text) after ``edit`` changed it in place."""
    (row,) = [row for row in rows if row["seq"] == seq]
    value = json.loads(row[column])
    edit(value)
    row[column] = json.dumps(value)


def first_draw(rows: list[dict[str, Any]]) -> dict[str, Any]:
    (level,) = levels_document(mystery_draws(rows, 0, len(rows)))
    assert level["level"] == GRAND
    return dict(level["draws"][0])


def test_every_reveal_of_the_journal_checks(late: MysteryJournal) -> None:
    rows = journal_rows(late.path)
    levels = levels_document(mystery_draws(rows, 0, len(rows)))
    revealed = [draw["revealed"] for draw in levels[0]["draws"] if draw["revealed"]]
    assert [reveal["checks"] for reveal in revealed] == [True, True]
    assert unchecked(levels) == 0


def test_an_earlier_wager_that_reached_the_trigger_makes_the_reveal_fail(
    late: MysteryJournal,
) -> None:
    """The wager before the hit edited to carry the meter to the trigger: it was the first."""
    rows = journal_rows(late.path)
    (reveal_row, reveal), *_ = late.reveals
    before_hit = sorted(row.seq for row, _ in late.wagers if row.seq < reveal_row.seq)[-2]

    def reach(effects: list[dict[str, Any]]) -> None:
        (balances,) = [e for e in effects if e["effect"] == "balances" and e["pool_id"] == GRAND]
        balances["meter"] = str(reveal.trigger)

    edited(rows, before_hit, "effects", reach)
    found = first_draw(rows)["revealed"]
    assert not found["checks"]
    number = len([row for row, _ in late.wagers if row.seq <= before_hit]) - 1
    assert found["problem"] == (
        f"the first contribution to reach the trigger is number {number} (meter "
        f"{reveal.trigger}), not the one the hit names (meter {reveal.hit.cents})"
    )
    assert found["hit"]["seq"] == before_hit  # the first to reach it, as the rows now say
    levels = levels_document(mystery_draws(rows, 0, len(rows)))
    assert unchecked(levels) == 1
    assert reveal_rows(levels)[0][-1] == f"DOES NOT CHECK: {found['problem']}"


@pytest.mark.parametrize(
    ("lie", "problem"),
    [
        (lambda r: r.update(nonce="00" * 32), "do not open the draw's commitment"),
        (lambda r: r.update(trigger=r["trigger"] + 1), "do not open the draw's commitment"),
        (lambda r: r.update(draw=2), "the reveal is of draw 2, the draw of draw 1"),
    ],
    ids=["another-nonce", "another-trigger", "another-draw"],
)
def test_a_reveal_that_does_not_open_its_commitment_fails(
    late: MysteryJournal, lie: Callable[[dict[str, Any]], None], problem: str
) -> None:
    rows = journal_rows(late.path)
    (reveal_row, _), *_ = late.reveals
    edited(rows, reveal_row.seq, "event", lambda event: lie(event["reveal"]))
    found = first_draw(rows)["revealed"]
    assert not found["checks"]
    assert problem in found["problem"]


def test_the_report_of_an_edited_journal_says_the_reveal_does_not_check(
    late: MysteryJournal, capsys: pytest.CaptureFixture[str]
) -> None:
    (reveal_row, reveal), *_ = late.reveals
    with closing(sqlite3.connect(late.path)) as raw, raw:
        # The row as stored (controller/journal/compact.py) but for the nonce: it still reads.
        raw.execute(
            "UPDATE journal SET event = replace(event, ?, ?) WHERE seq = ?",
            (reveal.nonce, "00" * 32, reveal_row.seq),
        )
    status, out, err = run(capsys, "report", "--db", str(late.path))
    assert status == 1
    assert "at least one mystery reveal does not check" in err
    assert "DOES NOT CHECK: the trigger and nonce revealed do not open" in out
    status, out, _ = run(capsys, "report", "--db", str(late.path), "--json")
    assert status == 1
    (level,) = json.loads(out)["mystery_levels"]
    assert level["draws"][0]["revealed"]["checks"] is False


def test_a_lock_of_several_seats_is_one_question_and_its_first_seat_to_reach_the_trigger_wins(
    tmp_path: Path,
) -> None:
    """docs/rules.md § 10: the keeper is asked once per lock, at the meter after its last seat.

    A lock of three $5 wagers feeds the grand 50 cents a seat, so a trigger is often reached by
    the first or second seat of the lock: the reveal names the meter after the lock (what the
    keeper was asked at), and the report checks it and names the seat that reached it first.
    """
    floor_ = mystery_journal(tmp_path / "journal.db")
    floor_.draw()
    reveal = None
    for _ in range(40):  # a lock reaches the trigger mid-lock about two times in three
        reveal = floor_.round_of(3)
        if reveal is not None and reveal.hit.cents - reveal.trigger >= 50:
            break  # reached by a seat before the lock's last
    else:  # pragma: no cover
        raise AssertionError("no lock reached the trigger before its last seat")
    assert reveal is not None
    floor_.journal.close()
    rows = journal_rows(floor_.path)
    levels = levels_document(mystery_draws(rows, 0, len(rows)))
    revealed = [draw["revealed"] for draw in levels[0]["draws"] if draw["revealed"]]
    last = revealed[-1]
    assert last["checks"] is True, last["problem"]
    assert last["hit_meter"] == str(reveal.hit.cents)
    # The winner is the first seat whose contribution reached the trigger, not the lock's last.
    seat_meter = reveal.hit.cents - 50 * (3 - last["hit"]["seat"])
    assert seat_meter >= reveal.trigger > seat_meter - 50
    assert last["hit"]["seat"] < 3
