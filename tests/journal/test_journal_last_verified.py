"""The console's "last verified" reads a few rows of an index, never every payout.

The supervisors' console asks for the last pays verified on each of its polls, on the event
loop that sequences the table events (docs/security.md, "The web port cannot starve the money
path"). A journal holds a payout for every settled wager, so a read that scanned them would
grow with the journal: the query goes through the index of the pays verified
(``payouts_verified``, made by a migration on every journal, old files included) and stops at
its limit, as SQLite's own plan of it says.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from support.journal.journal_rig import opened_journal, play_rounds

from controller.journal.sqlite.reads import LAST_VERIFIED

if TYPE_CHECKING:
    from pathlib import Path


def test_the_last_verified_pays_are_read_through_their_index(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        play_rounds(journal)
        (last,) = journal.last_verified(10)
        assert (last.payout.payout_id, last.verified_by) == (
            "r2-settle/3/progressive", "supervisor-7",
        )  # fmt: skip
    with sqlite3.connect(path) as connection:
        plan = " ".join(str(row[-1]) for row in connection.execute(
            f"EXPLAIN QUERY PLAN {LAST_VERIFIED}", [10]
        ))  # fmt: skip
    assert "USING INDEX payouts_verified" in plan, plan  # in its order, to the limit: no sort
