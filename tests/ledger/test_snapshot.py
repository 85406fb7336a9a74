"""The snapshot: the whole ledger state as one canonical text, which a checkpoint signs.

It must hold every part of the state (a part left out would be lost by a start-up that
restores from it, and unsigned), read back to the very same state, give the same text for the
same state whichever way the state was reached (restored from the tables, or replayed), and,
compared with another, name each value that differs.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from contextlib import closing
from dataclasses import replace
from typing import TYPE_CHECKING

from support.journal.journal_rig import POOL, TABLE, opened_journal, replay, rows_of, wager

from controller.events import decode_event
from controller.ledger.operators import Authority, Operator, Role
from controller.ledger.snapshot import (
    DERIVED,
    PARTS,
    differences,
    digest,
    snapshot_text,
    state_digest,
    state_from_text,
)
from controller.ledger.state import LedgerState
from controller.ledger_journal.sqlite import Journal
from controller.security.manifest import ApprovedManifest

if TYPE_CHECKING:
    from pathlib import Path


def test_the_snapshot_covers_every_field_of_the_ledger_state() -> None:
    fields = {field.name for field in dataclasses.fields(LedgerState)}
    assert fields == set(PARTS) | DERIVED, (
        "a field of LedgerState is not in the snapshot (controller/ledger/snapshot.py): "
        f"{sorted(fields - set(PARTS) - DERIVED)}"
    )


def rich_state(path: Path) -> LedgerState:
    """A state with every part filled in: an open round, a pending payout, operators..."""
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        state = journal.state
    operator = Operator("mgr", Role.MANAGER, "", "", "ed25519", "pk", failures=2, locked=True)
    manifest = ApprovedManifest("1.0", "abc", "def", (("controller/x.py", "00"),), "mgr")
    authority = Authority(
        signed=True, configuration="c0ffee", dual_control_cents=5, lockout_after=3
    )
    return replace(
        state, operators={"mgr": operator}, manifest=manifest, revision=7, authority=authority
    )


def test_a_snapshot_reads_back_to_the_very_same_state(played: Path, tmp_path: Path) -> None:
    state = rich_state(tmp_path / "rich.db")
    assert state.rounds
    assert state.operators
    assert state.manifest
    assert state.authority.signed
    text = snapshot_text(state)
    back = state_from_text(text)
    assert back == state
    assert snapshot_text(back) == text
    assert state_digest(back) == digest(text)
    with Journal(played) as journal:
        assert journal.state.pools
        assert state_from_text(snapshot_text(journal.state)) == journal.state


def test_the_tables_and_the_replay_give_the_same_snapshot(played: Path) -> None:
    replayed = replay([decode_event(str(row["event"])) for row in rows_of(played)])
    with Journal(played) as journal:
        assert snapshot_text(journal.state) == snapshot_text(replayed)
        assert differences(journal.state, replayed) == []


def test_differences_name_each_value_that_differs(played: Path) -> None:
    with Journal(played) as journal:
        honest = journal.state
    with closing(sqlite3.connect(played)) as raw, raw:
        (text,) = raw.execute("SELECT state FROM pools WHERE pool_id = ?", [POOL]).fetchone()
        document = json.loads(text)
        document["meter"] = "250000000"
        raw.execute("UPDATE pools SET state = ? WHERE pool_id = ?", [json.dumps(document), POOL])
        raw.execute("DELETE FROM tables WHERE table_id = ?", [TABLE])
    with Journal(played) as journal:
        edited = journal.state
    meter = honest.pools[POOL].meter
    assert differences(edited, honest) == [
        f"pools/{POOL}: meter 250000000 in the table, {meter} by the journal",
        f"table_events/{TABLE}: by the journal, not in the table",
    ]
    assert differences(replace(honest, revision=9), honest) == [
        f"revision: 9 in the table, {honest.revision} by the journal"
    ]
