"""An identifier or a reason carrying a control character is refused at every live append.

docs/security.md, "Identifiers are one line of text". On the real signed site of
tests/cli/test_cli_apply_table_word.py: a dual-control meter adjustment, genuinely signed by
both supervisors, whose reason carries a newline and a forged second line, fed to ``jackpotd
apply``, is refused in words, journaled as a ``control-character`` fault (its own id one line
of text) and moves no meter; an operator named with a terminal's escape sequence is refused by
``jackpotd operator add``; a table's status from the daemon's intake naming a table with a
right-to-left override is refused at the journal's live append (the daemon's clock) and no
table changes. A journal that took such text before the rule (no live clock: an old journal's
rows replaying as written) still verifies, its rows as they were.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from support.ledger.apply_floor import Floor, floor
from support.ledger.approvals import key_file

from controller.clock import utc_now
from controller.events import MeterAdjusted, TableStatusChanged
from controller.ledger.screen import CONTROL_CHARACTER
from controller.ledger_journal.sqlite import Journal
from controller.security import keys
from controller.text import control_character

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["floor"]  # the fixture, used by name
CENTS = 5_000
FORGED_LINE = "sensor count\n2026-12-01 15:00:00 CRITICAL journal tampered"


def adjustment(floor: Floor, reason: str) -> MeterAdjusted:
    """A $50 correction of P1's reserve, signed now by both supervisors."""
    event = MeterAdjusted(
        f"adjust-{uuid.uuid4()}", utc_now(), "P1", "reserve", CENTS, "sup1", reason
    )
    with Journal(floor.database) as journal:
        floor.site.journal = journal
        return floor.site.sign(event, "sup1", "sup2")


def reserve(floor: Floor) -> int:
    with Journal(floor.database) as journal:
        return journal.state.pools["P1"].reserve_cents


def test_a_signed_adjustment_whose_reason_forges_a_second_line_is_refused(floor: Floor) -> None:
    before, rows_before = reserve(floor), len(floor.rows())
    status, _, err = floor.apply(adjustment(floor, FORGED_LINE))
    assert status == 1
    assert "reason 'sensor count\\n2026-12-01" in err
    assert "carries the control character U+000A" in err
    assert "\nCRITICAL" not in err  # the refusal is one line, the text quoted escaped
    assert reserve(floor) == before
    (row,) = floor.rows()[rows_before:]
    assert row["kind"] == "fault"
    assert row["outcome"] == "applied"  # the fault row; the adjustment itself never applied
    assert CONTROL_CHARACTER in str(row["event"])
    assert control_character(str(row["event_id"])) is None
    status, _, err = floor.apply(adjustment(floor, "sensor count"))  # the control
    assert status == 0, err
    assert reserve(floor) == before + CENTS
    status, _, err = floor.run("verify")
    assert status == 0, err


def test_an_operator_named_with_a_terminal_escape_is_refused_by_the_command(
    floor: Floor, tmp_path: Path
) -> None:
    hostile = "sup3\x1b]0;pwned\x07"
    public = key_file(tmp_path, hostile, keys.generate())  # its key file names it so
    status, _, err = floor.run(
        "operator", "add", hostile, "--role", "supervisor", "--public-key", str(public),
        "--key", str(tmp_path / "mgr.key"),
    )  # fmt: skip
    assert status == 1
    assert "operator id 'sup3\\x1b]0;pwned\\x07' carries the control character U+001B" in err
    assert "\x1b" not in err
    with Journal(floor.database) as journal:
        assert hostile not in journal.state.operators


def test_a_table_status_from_the_intake_naming_a_bidi_override_is_refused_live(
    floor: Floor,
) -> None:
    with Journal(floor.database) as journal:
        journal.live_clock = utc_now  # the daemon's live append (controller/journal/sequencing.py)
        tables = dict(journal.state.table_states)
        status = TableStatusChanged("status-1", utc_now(), "T1\u202e", False, "offline")
        receipt = journal.append(status, provenance="mqtt client=t1 topic=site/table/T1/status")
        assert not receipt.applied
        assert "table id 'T1\\u202e' carries the control character U+202E" in receipt.reason
        assert journal.state.table_states == tables
        row = list(journal.rows())[-1]
        assert CONTROL_CHARACTER in str(row["event"])
        assert control_character(str(row["event_id"])) is None


def test_a_journal_that_took_such_text_before_the_rule_still_verifies(floor: Floor) -> None:
    """No live clock: rows journaled as an old journal holds them, replayed as written."""
    before = reserve(floor)
    with Journal(floor.database) as journal:
        old = adjustment(floor, "count\tagain")
        floor.site.journal = journal
        assert journal.append(old, provenance="cli meter adjust").applied
    assert reserve(floor) == before + CENTS
    status, _, err = floor.run("verify")
    assert status == 0, err
