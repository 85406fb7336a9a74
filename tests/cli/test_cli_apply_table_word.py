"""``jackpotd apply`` never speaks for a table: device input and table status from it are refused.

The site is real (tests/support/ledger/approvals.py, tests/support/journal/twin_journals.py): a
journal whose authority is signed, its configuration approved by the manager with ``jackpotd config
approve`` (a pool ``P1`` and a table ``T1``). The attacks: a whole round with a natural
seven-card straight flush, as a bet sensor, the dealer's button and the shoe would send it,
fed to ``jackpotd apply`` (it would pay the meter with no table, no broker and no device
involved), and ``table-status`` rows that close every table. Each is refused by name and
journaled as a fault; no meter moves and ``jackpotd verify`` passes. The same round from the
daemon's intake plays and pays, so the round is a real one and only its writer is refused.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from support.ledger.apply_floor import AT, Floor, floor, forged_round

from controller.clock import utc_now
from controller.events import (
    RoundVoided,
    TableStatusChanged,
)
from controller.journal.sqlite.rows import provenances
from controller.ledger.screen import NOT_FROM_INTAKE
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["floor"]  # the fixture, used by name


def test_apply_of_a_forged_straight_flush_round_is_refused_by_kind_and_moves_no_meter(
    floor: Floor,
) -> None:
    before, rows_before = floor.meters(), len(floor.rows())
    status, out, err = floor.apply(*forged_round())
    assert status == 1
    for kind in ("bet-sensed", "bets-locked", "card-dealt", "deal-complete"):
        assert f"{kind} for table T1 from apply: refused" in err
    assert "come only from the daemon's intake" in err
    assert "17 events, 17 refused" in out
    assert floor.meters() == before  # no wager, no round, no payout, no meter moved
    new = floor.rows()[rows_before:]
    assert [row["kind"] for row in new] == ["fault"] * 17
    assert all(NOT_FROM_INTAKE in str(row["event"]) for row in new)
    with Journal(floor.database) as journal:
        assert {origin for seq, origin in provenances(journal.db.conn) if seq > rows_before} == {
            "apply"
        }
    status, _, err = floor.run("verify")
    assert status == 0, err


def test_the_same_round_from_the_daemons_intake_plays_and_pays_the_meter(
    floor: Floor, tmp_path: Path
) -> None:
    """The control: the round is a real paying one; only who writes it decides."""
    copy = tmp_path / "copy.db"
    shutil.copy(floor.database, copy)
    with Journal(copy) as journal:
        assert not journal.hits()
        receipts = journal.append_many(forged_round(), provenance="mqtt client=c-in topic=t")
        assert all(receipt.applied for receipt in receipts)
        # The straight flush hit the meter ($10,000.28), which went back to its seed.
        (hit,) = journal.hits()
        assert (hit.line, hit.win_cents) == ("seven-card-straight-flush", 1_000_028)


def test_apply_of_offline_status_rows_is_refused_and_every_table_stays_open(
    floor: Floor,
) -> None:
    before = floor.meters()
    closing = TableStatusChanged("T1/status/forged/1", AT, "T1", online=False, reason="forged")
    status, _, err = floor.apply(closing)
    assert status == 1
    assert "table-status for table T1 from apply: refused" in err
    assert floor.meters() == before
    with Journal(floor.database) as journal:
        assert (
            journal.state.table_states.get("T1") is None or journal.state.table_states["T1"].online
        )


def test_a_file_mixing_a_signed_operator_event_with_a_devices_input_is_refused_whole(
    floor: Floor,
) -> None:
    """Nothing of the file moves: its signed void is not applied either."""
    void = floor.site.sign(
        RoundVoided("void-x", AT, "T1", "R0", "sup1", "misdeal", refund_contributions=True), "sup1"
    )
    device_void = RoundVoided("T1/shoe/99", AT, "T1", "R9", "device shoe", "misdeal")
    rows_before = len(floor.rows())
    status, _, err = floor.apply(void, forged_round()[0], device_void)
    assert status == 1
    assert "bet-sensed for table T1 from apply: refused" in err
    assert "round-voided for table T1 from apply: refused" in err
    kinds = [row["kind"] for row in floor.rows()[rows_before:]]
    assert kinds == ["fault", "fault"]  # the signed void was left out, not applied


def test_signed_operator_events_still_apply_and_say_they_came_from_apply(floor: Floor) -> None:
    void = floor.site.sign(  # dated now: at a live append the window must hold the clock
        RoundVoided("void-y", utc_now(), "T1", "R0", "sup1", "misdeal", refund_contributions=True),
        "sup1",
    )
    rows_before = len(floor.rows())
    floor.apply(void)  # the ledger judges it (no open round R0): applied or refused, journaled
    new = floor.rows()[rows_before:]
    assert [row["kind"] for row in new] == ["round-voided"]
    with Journal(floor.database) as journal:
        assert dict(provenances(journal.db.conn, rows_before)) == {rows_before + 1: "apply"}
