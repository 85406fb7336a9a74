"""The journal port's contract (docs/journal.md, "The port"), run against every backend.

Each test works only through :class:`controller.journal.port.JournalPort`, the read-only
:class:`controller.journal.readonly.JournalReader` and the sink's
:class:`controller.ports.Outbox`, as the sequencer, start-up, CLI, display and metrics do,
each opened through the one factory (:func:`controller.journal.backends.backend_for`), so
that another backend passes by adding one fixture parameter: its location, how to make its
writes fail for a while (a real failure of the store, never a mock), and how an intruder with
its password writes it. Every member of the port is exercised. The backends: the SQLite file,
a PostgreSQL database on a real server (tests/support/postgres.py), and a journal in this
process's memory (controller/journal/memory/).
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from support.approvals import Site, enrollment
from support.journal_rig import (
    AT,
    FIVE_ACES,
    NOTHING,
    OTHER,
    POOL,
    TABLE,
    pool_opened,
    settle,
    snapshot,
    table_configured,
    wager,
)
from support.site_outbox import play as queue_site_messages

from controller.clock import utc_now
from controller.events import BetSensed, HitVerified, SequencerTookOver
from controller.journal import JournalError
from controller.journal.backends import backend_for
from controller.journal.high_water import sign_head
from controller.journal.location import DatabaseUrl, MemoryLocation
from controller.journal.memory import database as memory
from controller.journal.port import JournalPort, PreparedAppend
from controller.journal.postgres.fence import Fence
from controller.journal.provenance import LATE_SIGNATURE
from controller.journal.readonly import JournalReader, PayFilter
from controller.ports import APPLIED, DAEMON, REJECTED, Outbox
from controller.security import keys
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager

    from controller.journal.location import JournalLocation

HIT = "r2-settle/3/progressive"
"""The payout of seat 3's five aces, which needs a supervisor's verification."""


@dataclass(frozen=True)
class Backend:
    """How the contract reaches one backend."""

    location: JournalLocation
    """The test's own location, opened through the factory each time (the same: reopening)."""
    failing_writes: Callable[[], AbstractContextManager[None]]
    """Within this, every write of the store fails."""
    intrude: Callable[[str], int]
    """Run one statement on the store as someone with its password would; the rows it changed."""
    shared: bool
    """Whether several controller nodes may open it (its sequencer is fenced: docs/ha.md)."""

    def open(self) -> JournalPort[Any]:
        """The journal at the test's location, opened for writing (made if new)."""
        return backend_for(self.location).open()


def _sqlite(request: pytest.FixtureRequest) -> Backend:
    path: Path = request.getfixturevalue("tmp_path") / "journal.db"

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another process with the file makes the store refuse rows, as a full disk would.
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        yield
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("DROP TRIGGER no_rows")

    def intrude(statement: str) -> int:
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            return other.execute(statement).rowcount

    return Backend(path, failing_writes, intrude, shared=False)


def _postgres(request: pytest.FixtureRequest) -> Backend:
    url = DatabaseUrl(request.getfixturevalue("postgres_url"))

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another session makes the server refuse rows, as a full disk would.
        with psycopg.connect(url.url, autocommit=True) as other:
            other.execute(
                "CREATE FUNCTION no_rows() RETURNS trigger LANGUAGE plpgsql AS "
                "$$BEGIN RAISE EXCEPTION 'disk full (simulated)'; END$$"
            )
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "FOR EACH ROW EXECUTE FUNCTION no_rows()"
            )
        yield
        with psycopg.connect(url.url, autocommit=True) as other:
            other.execute("DROP TRIGGER no_rows ON journal")
            other.execute("DROP FUNCTION no_rows()")

    def intrude(statement: str) -> int:
        with psycopg.connect(url.url, autocommit=True) as other:
            return other.execute(statement).rowcount

    return Backend(url, failing_writes, intrude, shared=True)


def _memory(request: pytest.FixtureRequest) -> Backend:
    location = MemoryLocation(f"contract-{uuid.uuid4().hex}")
    request.addfinalizer(lambda: memory.discard(location))

    @contextmanager
    def failing_writes() -> Iterator[None]:
        # Another connection of the process makes the store refuse rows, as a full disk would.
        with closing(memory.connect(location)) as other:
            other.execute(
                "CREATE TRIGGER no_rows BEFORE INSERT ON journal "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        yield
        with closing(memory.connect(location)) as other:
            other.execute("DROP TRIGGER no_rows")

    def intrude(statement: str) -> int:
        with closing(memory.connect(location)) as other:
            return other.execute(statement).rowcount

    return Backend(location, failing_writes, intrude, shared=False)


BACKENDS: dict[str, Callable[[pytest.FixtureRequest], Backend]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
    "memory": _memory,
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    """Each backend, at a location of this test's own (the server started only when needed)."""
    return BACKENDS[request.param](request)


@pytest.fixture
def journal(backend: Backend) -> Iterator[JournalPort[Any]]:
    """A journal holding one pool and one table."""
    opened = backend.open()
    for event in (pool_opened(), table_configured()):
        assert opened.append(event).applied
    yield opened
    opened.close()


def play_hit_round(journal: JournalPort[Any]) -> None:
    """Round r1 with no hit; round r2 with five aces on seat 3 (pending verification)."""
    journal.append_many([wager("r1-w1", "r1", 1), wager("r1-w2", "r1", 2)])
    journal.append(settle("r1-settle", "r1", {1: NOTHING, 2: OTHER}))
    journal.append_many([wager("r2-w3", "r2", 3), wager("r2-w4", "r2", 4)])
    journal.append(settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}))


def bet_sensed(seq: int, device: str = "sensor-1") -> BetSensed:
    return BetSensed(
        f"{TABLE}/{device}/{seq}", AT, TABLE, device, seq, seat=1, spot="progressive", present=True
    )


# --- appending ---------------------------------------------------------------------------------


def test_journal_contract_each_appended_event_takes_the_next_row_and_moves_the_state(
    journal: JournalPort[Any],
) -> None:
    receipts = journal.append_many([wager("r1-w1", "r1", 1), wager("r1-w2", "r1", 2)])
    assert [(r.seq, r.outcome, r.duplicate) for r in receipts] == [
        (3, APPLIED, False),
        (4, APPLIED, False),
    ]
    assert journal.state.pools[POOL].wagers_count == 2
    assert journal.head[0] == journal.committed_seq() == 4


def test_journal_contract_a_refused_event_is_journaled_and_moves_no_money(
    journal: JournalPort[Any],
) -> None:
    before = snapshot(journal.state)
    receipt = journal.append(wager("w-unknown-seat", "r1", 99))
    assert (receipt.seq, receipt.outcome, receipt.applied) == (3, REJECTED, False)
    assert receipt.reason
    assert snapshot(journal.state) == before


def test_journal_contract_a_duplicate_is_acknowledged_with_its_first_outcome_and_not_applied(
    journal: JournalPort[Any],
) -> None:
    first = journal.append(wager("r1-w1", "r1", 1))
    again = journal.append(wager("r1-w1", "r1", 1))
    assert (again.seq, again.outcome, again.duplicate) == (first.seq, first.outcome, True)
    assert again.effects == first.effects
    assert journal.state.pools[POOL].wagers_count == 1
    assert journal.head[0] == first.seq


def test_journal_contract_an_id_reused_for_other_content_is_a_fault_that_moves_no_money(
    journal: JournalPort[Any],
) -> None:
    journal.append(wager("r1-w1", "r1", 1))
    before = snapshot(journal.state)
    reused = journal.append(wager("r1-w1", "r1", 2, amount=500))
    # What is journaled is the fault, under an id of its own; the reused id keeps its event.
    assert reused.conflict
    assert reused.event_id.startswith("r1-w1#conflict-")
    assert (reused.seq, reused.effects) == (4, ())
    assert snapshot(journal.state) == before
    assert journal.append(wager("r1-w1", "r1", 1)).duplicate


# --- prepare, commit, adopt --------------------------------------------------------------------


def test_journal_contract_prepared_events_reach_the_state_only_when_adopted_after_commit(
    journal: JournalPort[Any],
) -> None:
    state, head = journal.state, journal.head
    prepared = journal.prepare([wager("r1-w1", "r1", 1)])
    assert (journal.state, journal.head) == (state, head)
    with pytest.raises(JournalError, match="must be committed"):
        journal.adopt(prepared)
    prepared.commit()
    assert prepared.committed
    (receipt,) = journal.adopt(prepared)
    assert prepared.receipts == [receipt]
    assert (receipt.seq, receipt.applied) == (3, True)
    assert journal.head[0] == 3
    assert journal.state.pools[POOL].wagers_count == 1


def test_journal_contract_a_failed_write_leaves_journal_and_state_unchanged(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    journal.append(wager("r1-w1", "r1", 1))
    state, head, rows = journal.state, journal.head, journal.committed_seq()
    with backend.failing_writes(), pytest.raises(JournalError, match="disk full"):
        journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    assert (journal.state, journal.head, journal.committed_seq()) == (state, head, rows)
    receipts = journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
    assert [(r.seq, r.duplicate) for r in receipts] == [(4, False), (5, False)]
    assert journal.verify().ok


# --- reads -------------------------------------------------------------------------------------


def test_journal_contract_reads_return_the_payouts_as_appended(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    (pending,) = journal.pending_payouts()
    assert (pending.payout_id, pending.table_id, pending.seat, pending.line) == (
        HIT,
        TABLE,
        3,
        "five-aces",
    )
    assert pending.win_cents > 0
    assert journal.oldest_pending_at() == pending.at
    (hit,) = journal.hits()
    assert (hit.payout_id, hit.pool_id, hit.win_cents) == (HIT, POOL, pending.win_cents)
    assert journal.count_payouts(excluding_kind="envy") == 4
    (record,) = journal.verification_records(pending_only=True)
    assert (record.payout.payout_id, record.payout.status, record.verified_by) == (
        HIT,
        "pending",
        None,
    )
    assert journal.verification_records(pool_id="no-such-pool") == []


def test_journal_contract_a_verified_hit_leaves_the_pending_reads(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    verified = journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7"))
    assert verified.applied
    assert journal.pending_payouts() == []
    assert journal.oldest_pending_at() is None
    assert journal.verification_records(pending_only=True) == []
    (record,) = journal.verification_records(pool_id=POOL)
    assert (record.payout.status, record.verified_by, record.verified_seq) == (
        "paid",
        "supervisor-7",
        verified.seq,
    )
    assert [hit.payout_id for hit in journal.hits(newest_first=True, limit=1)] == [HIT]
    (last,) = journal.last_verified(5)
    assert (last.payout.payout_id, last.verified_by, last.verified_seq) == (
        HIT, "supervisor-7", verified.seq,
    )  # fmt: skip
    assert journal.last_verified(0) == []


def test_journal_contract_payouts_since_a_row_are_given_as_made_for_a_sink_catching_up(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    made = journal.payouts_since(0)
    assert len(made) == journal.count_payouts(excluding_kind="envy") == 4
    assert [seq for seq, _, _ in made] == sorted(seq for seq, _, _ in made)
    hit_seq = next(seq for seq, _, payout in made if payout.payout_id == HIT)
    journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7"))
    # Verified since, the hit is still given as it was made: pending.
    since = journal.payouts_since(hit_seq - 1)
    assert {seq for seq, _, _ in since} == {hit_seq}
    (again,) = [payout for _, _, payout in since if payout.payout_id == HIT]
    assert (again.payout_id, again.status) == (HIT, "pending")
    assert journal.payouts_since(journal.head[0]) == []


def test_journal_contract_device_highs_keep_each_devices_highest_seq(
    journal: JournalPort[Any],
) -> None:
    assert journal.device_highs() == {}
    journal.append_many([bet_sensed(1), bet_sensed(3), bet_sensed(2)])
    journal.append(bet_sensed(7, device="sensor-2"))
    assert journal.device_highs() == {(TABLE, "sensor-1"): 3, (TABLE, "sensor-2"): 7}


# --- verify and reopen -------------------------------------------------------------------------


def test_journal_contract_verify_passes_a_clean_journal_at_its_head(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    report = journal.verify()
    assert report.ok, report.problems
    assert report.head == journal.head
    assert report.rows == journal.committed_seq()


def test_journal_contract_reopening_restores_state_head_highs_and_reads(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    play_hit_round(journal)
    journal.append(bet_sensed(5))
    before = (
        snapshot(journal.state),
        journal.head,
        journal.device_highs(),
        journal.pending_payouts(),
        journal.hits(),
    )
    assert journal.state.pending  # the hit awaits verification across the restart
    journal.close()
    reopened = backend.open()
    try:
        after = (
            snapshot(reopened.state),
            reopened.head,
            reopened.device_highs(),
            reopened.pending_payouts(),
            reopened.hits(),
        )
        assert after == before
        assert reopened.append(wager("r3-w1", "r3", 1)).seq == before[1][0] + 1
    finally:
        reopened.close()


# --- where, who writes, and the sequencer's fence ----------------------------------------------


def test_journal_contract_path_names_the_location_it_was_opened_at(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    assert journal.path == backend.location


def test_journal_contract_a_journal_opened_without_a_fence_leads_at_epoch_0_with_no_lease(
    journal: JournalPort[Any],
) -> None:
    assert (journal.epoch, journal.took_over, journal.lease_renewal_s) == (0, None, None)
    assert journal.leading
    head = journal.head
    journal.renew()  # nothing to renew: no row, no state moves
    assert (journal.head, journal.leading) == (head, True)


def test_journal_contract_the_sequencers_journal_takes_the_fence_of_a_shared_store_only(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    sequenced = backend_for(backend.location).open_sequenced(Fence("node-1", lease_s=5.0))
    try:
        assert sequenced.leading
        if backend.shared:
            # The first takeover: epoch 1, journaled by the service as its first row.
            assert sequenced.epoch == 1
            took = sequenced.took_over
            assert isinstance(took, SequencerTookOver)
            assert (took.node, took.epoch) == ("node-1", 1)
            renewal = sequenced.lease_renewal_s
            assert renewal is not None
            assert 0 < renewal < 5.0
            assert sequenced.append(took).applied
            sequenced.renew()
            assert sequenced.leading
        else:
            # One writer: no fence to take, no lease to renew.
            assert (sequenced.epoch, sequenced.took_over, sequenced.lease_renewal_s) == (
                0,
                None,
                None,
            )
            sequenced.renew()
        assert sequenced.append(wager("r1-w1", "r1", 1)).seq == journal.head[0] + 1 + (
            1 if backend.shared else 0
        )
    finally:
        sequenced.close()


def test_journal_contract_each_row_keeps_its_provenance_the_writers_unless_named(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    journal.writer = "cli contract"
    unnamed = journal.append(wager("r1-w1", "r1", 1))
    named = journal.append_many(
        [wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)], provenance=[DAEMON, "cli submit"]
    )
    with backend_for(backend.location).reader() as reader:
        kept = dict(reader.provenances())
    assert [kept[receipt.seq] for receipt in (unnamed, *named)] == [
        "cli contract",
        DAEMON,
        "cli submit",
    ]


def test_journal_contract_a_live_append_refuses_a_signature_whose_window_has_passed(
    backend: Backend,
) -> None:
    journal = backend.open()
    try:
        site = Site.create(journal)
        later = enrollment("sup3", "supervisor", keys.generate(), "mgr")
        signed = site.sign(later, "mgr")
        before = snapshot(journal.state)
        journal.live_clock = lambda: "2099-01-01T00:00:00.000Z"  # the controller's clock, late
        refused = journal.append(signed)
        assert not refused.applied
        assert LATE_SIGNATURE in refused.event_id
        assert "a signature is taken only within its window" in refused.reason
        assert snapshot(journal.state) == before
        journal.live_clock = utc_now
        assert journal.append(site.sign(later, "mgr")).applied
    finally:
        journal.close()


# --- a property's outbox to central, and a sink's outbox ---------------------------------------


def test_journal_contract_site_messages_are_given_in_order_after_the_acknowledged_one(
    backend: Backend,
) -> None:
    journal = backend.open()
    try:
        messages = [message for _, message in queue_site_messages(journal)]
        assert journal.site_messages(0, 100) == messages
        assert journal.site_messages(1, 1) == messages[1:2]
        assert journal.site_messages(len(messages), 100) == []
        # A message deleted from the outbox is found: nothing is sent.
        assert backend.intrude("DELETE FROM site_messages WHERE site_seq = 2") == 1
        with pytest.raises(JournalError):
            journal.site_messages(0, 100)
    finally:
        journal.close()


def test_journal_contract_a_sinks_outbox_keeps_its_messages_and_hit_mark_across_reopening(
    journal: JournalPort[Any],
) -> None:
    outbox = journal.outbox("sink-a")
    try:
        assert outbox.pending() == []
        first = journal.head[0]
        assert outbox.hits_stored_through() == first  # a new sink marks the journal's end
        play_hit_round(journal)
        assert outbox.missed_payouts(first) == journal.payouts_since(first)
        hit_seq = next(
            seq for seq, _, payout in journal.payouts_since(first) if payout.payout_id == HIT
        )
        plain = outbox.add("site/sign/1", b"meter", qos=1, retain=True, created=AT)
        hit = outbox.add_hit("site/hits", b"five aces", qos=1, created=AT, seq=hit_seq)
        outbox.add_hit(
            "site/hits", b"older", qos=0, created=AT, seq=first
        )  # the mark keeps its high
        assert outbox.hits_stored_through() == hit_seq
        outbox.remove(plain)
    finally:
        outbox.close()
    other = journal.outbox("sink-b")
    try:
        assert other.pending() == []  # a sink never sees another's messages
    finally:
        other.close()
    again = journal.outbox("sink-a")
    try:
        pending = [(m.row_id, m.topic, m.payload, m.qos, m.retain) for m in again.pending()]
        assert pending[0] == (hit, "site/hits", b"five aces", 1, False)
        assert [m[2] for m in pending] == [b"five aces", b"older"]
        assert again.hits_stored_through() == hit_seq
    finally:
        again.close()


# --- the start-up check and the read-only reader -----------------------------------------------


def test_journal_contract_the_start_up_check_passes_the_stored_state_the_rows_give(
    journal: JournalPort[Any],
) -> None:
    play_hit_round(journal)
    key = ControllerKey.generate()
    held = sign_head(key, "controller-1", "", journal.head, AT)
    check = journal.check_state(key, held)
    assert check.ok, check.problems
    assert check.replayed == journal.head[0]


def test_journal_contract_the_start_up_check_names_a_pools_stored_state_edited_without_a_row(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    play_hit_round(journal)
    journal.close()
    edited = "UPDATE pools SET state = replace(state, '\"hits_count\":1', '\"hits_count\":0')"
    assert backend.intrude(edited) == 1
    reopened = backend.open()
    try:
        check = reopened.check_state(ControllerKey.generate())
        assert not check.ok
        assert any(POOL in problem for problem in check.problems), check.problems
    finally:
        reopened.close()


def test_journal_contract_the_start_up_check_refuses_a_journal_behind_its_signed_head(
    journal: JournalPort[Any],
) -> None:
    key = ControllerKey.generate()
    seq, _ = journal.head
    ahead = sign_head(key, "controller-1", "", (seq + 5, "ab" * 32), AT)
    (went_back,) = journal.check_state(key, ahead).problems
    assert "the journal went back" in went_back
    rewritten = sign_head(key, "controller-1", "", (seq, "ab" * 32), AT)
    (problem,) = journal.check_state(key, rewritten).problems
    assert "the journal was rewritten" in problem


def test_journal_contract_the_reader_gives_what_the_writer_journaled_and_writes_nothing(
    backend: Backend, journal: JournalPort[Any]
) -> None:
    play_hit_round(journal)
    with backend_for(backend.location).reader() as reader:
        assert reader.path == backend.location
        assert snapshot(reader.state) == snapshot(journal.state)
        rows = list(reader.rows())
        assert [row["seq"] for row in rows] == list(range(1, journal.head[0] + 1))
        assert (rows[-1]["seq"], rows[-1]["hash"]) == journal.head
        assert [seq for seq, _ in reader.provenances()] == [row["seq"] for row in rows]
        (pending,) = reader.pays(PayFilter(kinds=("progressive",), pending_only=True))
        assert (pending.payout.payout_id, pending.payout.status) == (HIT, "pending")
        every = reader.pays(PayFilter(kinds=("all",)))  # a pay: an amount won
        won = [payout for _, _, payout in journal.payouts_since(0) if payout.win_cents > 0]
        assert sorted(record.payout.payout_id for record in every) == sorted(
            payout.payout_id for payout in won
        )
        assert [record.seq for record in every] == sorted(
            (record.seq for record in every), reverse=True
        )
    assert journal.committed_seq() == journal.head[0]
    assert journal.append(wager("r3-w1", "r3", 1)).seq == journal.head[0]


# --- the contract itself -----------------------------------------------------------------------


def _members(protocol: type) -> set[str]:
    """A protocol's public members: its methods, properties and annotated attributes."""
    names = set(vars(protocol)) | set(vars(protocol).get("__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


@pytest.mark.parametrize("protocol", [JournalPort, PreparedAppend, JournalReader, Outbox])
def test_journal_contract_exercises_every_member_of_the_port_the_reader_and_the_outbox(
    protocol: type,
) -> None:
    source = Path(__file__).read_text()
    members = _members(protocol)
    assert members  # the protocol was read
    unexercised = sorted(name for name in members if not re.search(rf"\.{name}\b", source))
    assert unexercised == [], f"{protocol.__name__} members no contract test uses"
