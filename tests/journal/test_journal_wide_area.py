"""Both ends of a wide-area link in the journal: materialized, restored, checked, on both backends.

controller/journal/restore.py (the ``meta`` rows ``sites`` at central and ``chain`` at a
property), controller/ledger/snapshot.py (each in a snapshot only when there is one, so that
every snapshot made before wide-area links keeps its text and the digest its checkpoint
signed); docs/wide-area.md. A real SQLite file and a real PostgreSQL server
(tests/support/journal/postgres.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.journal.journal_rig import (
    AT,
    PAYTABLE,
    POOL,
    STRAIGHT_FLUSH,
    pool_opened,
    settle,
    table_configured,
    wager,
)

from controller.journal.location import DatabaseUrl
from controller.ledger.apply import LedgerState, apply
from controller.ledger.snapshot import snapshot_text, state_from_text
from controller.ledger_journal import open_journal
from controller.security.controller_key import ControllerKey
from controller.wide_effects import AwardMade
from controller.wide_events import (
    SiteLinked,
    SiteReported,
    WideAreaJoined,
    WideAreaStatusChanged,
    site_event_id,
)
from controller.widearea.messages import GENESIS, Contribution, HitClaim, SiteBody, next_message

if TYPE_CHECKING:
    from pathlib import Path

    from controller.journal.location import JournalLocation

SITE = "atlantic"


def _reported(key: ControllerKey, bodies: list[SiteBody]) -> list[SiteReported]:
    events, prev = [], GENESIS
    for n, body in enumerate(bodies, 1):
        message = next_message(SITE, n, prev, AT, body)
        message = message.signed(key.sign(message.digest.encode()))
        events.append(SiteReported(site_event_id(SITE, n), AT, message))
        prev = message.digest
    return events


@pytest.fixture(params=["sqlite", "postgresql"])
def wide_location(request: pytest.FixtureRequest, tmp_path: Path) -> JournalLocation:
    """Where a journal lives: a file, or a database of its own on the test's server."""
    if request.param == "sqlite":
        return tmp_path / "central.db"
    return DatabaseUrl(request.getfixturevalue("postgres_url"))


def test_linked_properties_and_their_chains_survive_a_restart_and_the_start_up_check(
    wide_location: JournalLocation,
) -> None:
    key = ControllerKey.generate()
    bodies: list[SiteBody] = [Contribution(POOL, "t1", f"r{n}", 1, 100) for n in range(1, 6)]
    bodies.append(HitClaim(POOL, "t1", "r6", 1, "x", "1", 1, tuple(STRAIGHT_FLUSH)))
    journal = open_journal(wide_location)
    try:
        journal.append_many([pool_opened(), table_configured()])
        link = SiteLinked("link-1", AT, SITE, key.public_key, [POOL], "mgr")
        assert journal.append(link).applied
        receipts = journal.append_many(_reported(key, bodies))
        assert all(receipt.applied for receipt in receipts)
        awards = [e for e in receipts[-1].effects if isinstance(e, AwardMade)]
        assert len(awards) == 1
        state = journal.state
    finally:
        journal.close()
    journal = open_journal(wide_location)
    try:
        assert journal.state.sites == state.sites  # the materialized row, read back
        assert journal.state.sites[SITE].link.through == 6
        assert journal.state.pools == state.pools
        check = journal.check_state(ControllerKey.generate())
        assert check.ok, check.problems
        assert journal.verify().ok
        # A resend after the restart is the duplicate it is: the same id, applied once.
        again = journal.append(_reported(key, bodies)[0])
        assert again.duplicate
    finally:
        journal.close()


def test_a_snapshot_without_linked_properties_is_the_text_it_was_before_them() -> None:
    text = snapshot_text(LedgerState())
    assert '"sites"' not in text
    assert state_from_text(text) == LedgerState()


def test_a_snapshot_with_linked_properties_holds_them_exactly() -> None:
    key = ControllerKey.generate()
    state = LedgerState()
    for event in (pool_opened(), table_configured()):
        state, _ = apply(state, event)
    state, _ = apply(state, SiteLinked("link-1", AT, SITE, key.public_key, [POOL], "mgr"))
    for report in _reported(key, [Contribution(POOL, "t1", "r1", 1, 100)]):
        state, _ = apply(state, report)
    assert state_from_text(snapshot_text(state)).sites == state.sites


def test_a_propertys_chain_and_held_hits_survive_a_restart_and_the_start_up_check(
    wide_location: JournalLocation,
) -> None:
    central = ControllerKey.generate()
    journal = open_journal(wide_location)
    try:
        join = WideAreaJoined("join-1", AT, SITE, central.public_key, {POOL: PAYTABLE}, "mgr")
        journal.append_many([join, table_configured()])
        journal.append(WideAreaStatusChanged("open-1", AT, open=True))
        receipts = journal.append_many(
            [wager("w1", "r1", 1), wager("w2", "r2", 1), settle("s2", "r2", {1: STRAIGHT_FLUSH})]
        )
        assert all(receipt.applied for receipt in receipts)
        chain = journal.state.chain
        assert chain is not None
        assert (chain.seq, list(chain.held)) == (3, ["3"])
    finally:
        journal.close()
    journal = open_journal(wide_location)
    try:
        assert journal.state.chain == chain  # the materialized row, read back
        check = journal.check_state(ControllerKey.generate())
        assert check.ok, check.problems
        assert journal.verify().ok
    finally:
        journal.close()
