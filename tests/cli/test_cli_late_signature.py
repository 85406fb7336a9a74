"""A signed action captured and sent late is refused at its live append, by the controller's clock.

The ledger holds a signature's window (at most an hour, holding the event's time) to the
*event's* time, which whoever holds the signed bytes cannot change: but a genuine signed event
captured when it was made and sent two hours later still names its own time, inside its own
window. So the live append (the command line, the daemon) also holds every bound signature's
window to the controller's clock (controller/ledger/binding.py ``late``); a replay goes by the
journaled time and is not judged again. On the real signed site of
tests/cli/test_cli_apply_table_word.py: a dual-control meter adjustment, signed two hours ago by
two supervisors, fed to ``jackpotd apply``, is refused in words, journaled as a
``late-signature`` fault and moves no meter; the same adjustment signed now is applied; and
``jackpotd verify`` replays both as they were journaled.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from support.ledger.apply_floor import Floor, floor

from controller.clock import utc_iso
from controller.events import MeterAdjusted
from controller.ledger.screen import LATE_SIGNATURE
from controller.ledger_journal.sqlite import Journal

__all__ = ["floor"]  # the fixture, used by name
CENTS = 5_000


def adjustment(floor: Floor, at: datetime) -> MeterAdjusted:
    """A $50 correction of P1's reserve at ``at``, signed by both supervisors then."""
    event = MeterAdjusted(
        f"adjust-{uuid.uuid4()}", utc_iso(at), "P1", "reserve", CENTS, "sup1", "sensor count"
    )
    with Journal(floor.database) as journal:
        floor.site.journal = journal  # signed against the journal as it stands
        return floor.site.sign(event, "sup1", "sup2")


def reserve(floor: Floor) -> int:
    with Journal(floor.database) as journal:
        return journal.state.pools["P1"].reserve_cents


def test_a_signed_adjustment_captured_and_sent_two_hours_late_is_refused(floor: Floor) -> None:
    captured = adjustment(floor, datetime.now(UTC) - timedelta(hours=2))
    before, rows_before = reserve(floor), len(floor.rows())
    status, _, err = floor.apply(captured)
    assert status == 1
    assert f"meter-adjusted {captured.event_id}: refused at " in err
    assert "sup1's signature is valid from " in err
    assert "a signature is taken only within its window" in err
    assert reserve(floor) == before
    (row,) = floor.rows()[rows_before:]
    assert row["kind"] == "fault"
    assert LATE_SIGNATURE in str(row["event"])
    fresh = adjustment(floor, datetime.now(UTC))
    status, _, err = floor.apply(fresh)
    assert status == 0, err
    assert reserve(floor) == before + CENTS
    status, _, err = floor.run("verify")  # a replay goes by the journaled time
    assert status == 0, err
