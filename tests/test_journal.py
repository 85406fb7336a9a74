"""The journal (BRIEF §3): one transaction per event, idempotent, tamper-evident, replayable.

Every test works on a real SQLite file under ``tmp_path``; tampering is done with :mod:`sqlite3`
directly on that file, as an intruder with the file would do it, and failures are provoked
with a real lock or a real trigger, never with mocks.
"""

from __future__ import annotations

import importlib.resources
import json
import sqlite3
from contextlib import closing, suppress
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

import pytest

from controller.effects import PayoutMade, decode_effects
from controller.events import (
    FaultRecorded,
    HitVerified,
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    RoundSettled,
    TableConfigured,
    WagerLocked,
    decode_event,
)
from controller.journal import Journal, JournalError, store
from controller.journal.chain import GENESIS, row_hash
from controller.journal.codec import pool_json, wagers_json
from controller.journal.payouts import payouts_after
from controller.journal.schema import MIGRATIONS, SchemaError, migrate
from controller.journal.store import APPLIED, REJECTED
from controller.journal.verify import verify
from controller.ledger import LedgerError, LedgerState, apply

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from controller.events import AnyEvent

AT = "2024-05-01T12:00:00Z"
PAYTABLE = "progressive-1"
SEED_CENTS = 1_000_000
POOL = "pool-a"
TABLE = "T1"
STRAIGHT_FLUSH = ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h"]
FIVE_ACES = ["As", "Ah", "Ad", "Ac", "Jk", "4d", "7c"]
NOTHING = ["2c", "5d", "7s", "9c", "Jd", "Ks", "3h"]
OTHER = ["2s", "4s", "5c", "8c", "9d", "Td", "Js"]
THIRD = ["3c", "4h", "6d", "8s", "Th", "Qh", "2h"]
DEALER = ["2d", "4c", "6s", "8d", "Tc", "Qc", "3s"]


def paytable_text() -> str:
    return (importlib.resources.files("controller") / "paytables" / f"{PAYTABLE}.toml").read_text()


def pool_opened(event_id: str = "open-a", pool_id: str = POOL) -> PoolOpened:
    # 28.25 % + 2 %: each $1 wager adds 28 1/4 cents to the meter, so sub-cents are carried.
    return PoolOpened(
        event_id, AT, pool_id, PAYTABLE, SEED_CENTS, Decimal("0.2825"), Decimal("0.02")
    )


def table_configured(event_id: str = "table-1", table_id: str = TABLE) -> TableConfigured:
    return TableConfigured(
        event_id,
        AT,
        table_id,
        {PAYTABLE: paytable_text()},
        progressive=PAYTABLE,
        pool_id=POOL,
        verification_cents=50_000,
    )


def wager(event_id: str, round_id: str, seat: int, amount: int = 100) -> WagerLocked:
    return WagerLocked(event_id, AT, TABLE, round_id, seat, "progressive", amount)


def settle(event_id: str, round_id: str, hands: dict[int, list[str]]) -> RoundSettled:
    return RoundSettled(
        event_id, AT, TABLE, round_id, DEALER, {str(seat): cards for seat, cards in hands.items()}
    )


def opened_journal(path: Path) -> Journal:
    journal = Journal(path)
    for event in (pool_opened(), table_configured()):
        assert journal.append(event).applied
    return journal


def play_rounds(journal: Journal) -> None:
    """Three rounds: plain contributions, a five-aces hit (pending, then verified), a reset."""
    journal.append(wager("r1-w1", "r1", 1))
    journal.append(wager("r1-w2", "r1", 2))
    journal.append(settle("r1-settle", "r1", {1: NOTHING, 2: OTHER}))
    journal.append(wager("r2-w3", "r2", 3))
    journal.append(wager("r2-w4", "r2", 4))
    journal.append(settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}))
    journal.append(HitVerified("r2-verify", AT, "r2-settle/3/progressive", "supervisor-7"))
    journal.append(wager("r3-w1", "r3", 1))
    journal.append(settle("r3-settle", "r3", {1: STRAIGHT_FLUSH}))


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A closed journal file holding a few rounds, which verifies."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        play_rounds(journal)
    assert verify(path).ok
    return path


@pytest.fixture
def connection(played: Path) -> Iterator[sqlite3.Connection]:
    """A raw connection to the played journal, as an intruder would open it."""
    with closing(sqlite3.connect(played, isolation_level=None)) as raw:
        raw.row_factory = sqlite3.Row
        yield raw


def rows_of(path: Path) -> list[dict[str, object]]:
    with closing(sqlite3.connect(path)) as raw:
        raw.row_factory = sqlite3.Row
        return [dict(row) for row in raw.execute("SELECT * FROM journal ORDER BY seq")]


def table_rows(path: Path, table: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as raw:
        return raw.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()  # noqa: S608


def snapshot(state: LedgerState) -> dict[str, object]:
    """Everything of a ledger state that the journal stores, in comparable form."""
    return {
        "pools": {pool_id: pool_json(pool) for pool_id, pool in state.pools.items()},
        "tables": dict(state.table_events),
        "rounds": {key: wagers_json(wagers) for key, wagers in state.rounds.items()},
        "pending": dict(state.pending),
        "revision": state.revision,
    }


def replay(events: list[AnyEvent]) -> LedgerState:
    """A clean in-memory replay: :func:`controller.ledger.apply` from an empty state."""
    state = LedgerState()
    for event in events:
        with suppress(LedgerError):  # a refusal changes nothing
            state, _ = apply(state, event)
    return state


# --- one event, one transaction; restoring ---------------------------------------------------


def test_brief_3_wager_and_its_effects_are_materialized_with_its_journal_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        receipt = journal.append(wager("r1-w1", "r1", 1))
        assert receipt.applied
        assert (receipt.seq, receipt.duplicate, receipt.reason) == (3, False, "")
        pool = journal.state.pools[POOL]
        assert pool.meter == SEED_CENTS + Fraction(113, 4)
        assert pool.reserve == 2

    # Read back through a separate connection: all of it is on disk, none of it pending.
    row = rows_of(path)[-1]
    assert (row["seq"], row["event_id"], row["kind"], row["outcome"]) == (
        3, "r1-w1", "wager-locked", APPLIED,
    )  # fmt: skip
    assert decode_event(str(row["event"])) == wager("r1-w1", "r1", 1)
    assert [type(effect).__name__ for effect in decode_effects(str(row["effects"]))] == [
        "Contributed",
        "Balances",
    ]
    [(pool_id, state, seq)] = table_rows(path, "pools")
    assert (pool_id, seq) == (POOL, 3)
    assert json.loads(str(state))["meter"] == "4000113/4"
    assert table_rows(path, "rounds") == [(TABLE, "r1", '[[1,"progressive",100]]')]


def test_brief_3_settlement_writes_journal_row_pool_payouts_and_closes_round_together(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        receipt = journal.append(settle("r1-settle", "r1", {1: FIVE_ACES, 2: NOTHING}))
        assert receipt.applied
        assert not journal.state.rounds
        hit = journal.state.pending["r1-settle/1/progressive"]

    assert table_rows(path, "rounds") == []
    [pool_row] = table_rows(path, "pools")
    assert pool_row[2] == receipt.seq
    with closing(sqlite3.connect(path)) as raw:
        raw.row_factory = sqlite3.Row
        payouts = {row["payout_id"]: dict(row) for row in raw.execute("SELECT * FROM payouts")}
    assert set(payouts) == {"r1-settle/1/progressive", "r1-settle/2/progressive"}
    stored = payouts["r1-settle/1/progressive"]
    assert (stored["seq"], stored["status"], stored["line"]) == (
        receipt.seq,
        "pending",
        "five-aces",
    )
    assert stored["win_cents"] == stored["from_meter_cents"] == hit.win_cents == 100_005
    assert payouts["r1-settle/2/progressive"]["kind"] == "loss"
    assert payouts["r1-settle/2/progressive"]["status"] == "paid"


def test_brief_3_reopening_the_journal_restores_the_same_state(played: Path) -> None:
    with Journal(played) as journal:
        journal.append(wager("r4-w2", "r4", 2))  # an open round too
        journal.append(MeterAdjusted("adj", AT, POOL, "reserve", 500, "tech-3", "reserve audit"))
        before = snapshot(journal.state)
        assert before["rounds"]
        assert set(before["pending"]) == {"r3-settle/1/progressive"}
        assert journal.state.pools[POOL].meter.denominator > 1  # a sub-cent remainder
    with Journal(played) as reopened:
        assert snapshot(reopened.state) == before
        assert reopened.state.pools[POOL] == journal.state.pools[POOL]
        assert [row["seq"] for row in reopened.rows()] == list(range(1, 14))


def test_brief_3_pending_payout_survives_reopen_and_is_verified_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(settle("r1-settle", "r1", {1: STRAIGHT_FLUSH}))
    with Journal(path) as journal:
        assert set(journal.state.pending) == {"r1-settle/1/progressive"}
        receipt = journal.append(HitVerified("v1", AT, "r1-settle/1/progressive", "supervisor-7"))
        assert receipt.applied
        assert journal.state.pending == {}
        again = journal.append(HitVerified("v2", AT, "r1-settle/1/progressive", "supervisor-7"))
        assert again.outcome == REJECTED
        assert "no pending payout" in again.reason
    with closing(sqlite3.connect(path)) as raw:
        status = raw.execute(
            "SELECT status, verified_by, verified_seq FROM payouts WHERE payout_id = ?",
            ["r1-settle/1/progressive"],
        ).fetchone()
    assert status == ("paid", "supervisor-7", receipt.seq)
    assert verify(path).ok


def test_brief_3_group_commit_writes_a_batch_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        receipts = journal.append_many(
            [pool_opened(), table_configured(), wager("w1", "r1", 1), wager("w1", "r1", 1)]
        )
    assert [r.seq for r in receipts] == [1, 2, 3, 3]
    assert [r.duplicate for r in receipts] == [False, False, False, True]
    assert [row["event_id"] for row in rows_of(path)] == ["open-a", "table-1", "w1"]
    assert verify(path).ok


def test_brief_3_payouts_read_back_are_the_payouts_as_journaled(played: Path) -> None:
    """What a sink catching up reads equals each journal row's payout effects, as made."""
    with closing(sqlite3.connect(played)) as raw:
        as_journaled = [
            (int(row[0]), str(row[1]), effect)
            for row in raw.execute("SELECT seq, at, effects FROM journal ORDER BY seq")
            for effect in decode_effects(str(row[2]))
            if isinstance(effect, PayoutMade)
        ]
        read_back = payouts_after(raw, 0)
        assert read_back == as_journaled
        # The five aces waited for a supervisor: read back as made, pending, though now paid.
        (verified,) = [p for _, _, p in read_back if p.payout_id == "r2-settle/3/progressive"]
        assert verified.status == "pending"
        last = as_journaled[-1][0]
        assert payouts_after(raw, last) == []
        assert [seq for seq, _, _ in payouts_after(raw, last - 1)] == [last] * sum(
            1 for seq, _, _ in as_journaled if seq == last
        )


# --- idempotency ----------------------------------------------------------------------------


def test_brief_3_duplicate_event_id_returns_the_original_outcome_and_changes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        original = journal.append(wager("r1-w1", "r1", 1))
        state = journal.state
        repeat = journal.append(wager("r1-w1", "r1", 1))
        # Same id, other contents: still the original's outcome, still not applied.
        altered = journal.append(wager("r1-w1", "r1", 2))
        assert journal.state is state
        for receipt in (repeat, altered):
            assert receipt.duplicate
            assert (receipt.seq, receipt.outcome, receipt.reason, receipt.effects) == (
                original.seq, original.outcome, original.reason, original.effects,
            )  # fmt: skip
    assert len(rows_of(path)) == 3
    assert journal.state.pools[POOL].wagers_count == 1


def test_brief_3_duplicate_event_id_is_recognized_after_a_reopen(played: Path) -> None:
    rows_before = rows_of(played)
    pools_before = table_rows(played, "pools")
    payouts_before = table_rows(played, "payouts")
    with Journal(played) as journal:
        meters = snapshot(journal.state)
        receipts = journal.append_many(
            [
                wager("r2-w3", "r2", 3),
                settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}),
                settle("r3-settle", "r3", {1: STRAIGHT_FLUSH}),
                HitVerified("r2-verify", AT, "r2-settle/3/progressive", "supervisor-7"),
            ]
        )
        assert all(receipt.duplicate for receipt in receipts)
        assert all(receipt.applied for receipt in receipts)
        assert [receipt.seq for receipt in receipts] == [6, 8, 11, 9]
        assert snapshot(journal.state) == meters
    assert rows_of(played) == rows_before
    assert table_rows(played, "pools") == pools_before
    assert table_rows(played, "payouts") == payouts_before


def test_brief_3_duplicate_of_a_rejected_event_stays_rejected_even_if_now_acceptable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        refused = journal.append(table_configured("early"))  # its pool does not exist yet
        assert refused.outcome == REJECTED
        journal.append(pool_opened())
    with Journal(path) as journal:
        again = journal.append(table_configured("early"))
        assert again.duplicate
        assert (again.seq, again.outcome, again.reason) == (1, REJECTED, refused.reason)
        assert TABLE not in journal.state.tables
    assert len(rows_of(path)) == 2


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (
            WagerLocked("x", AT, "T9", "r1", 1, "progressive", 100),
            "unknown table 'T9'",
        ),
        (wager("x", "r1", 1, amount=200), "the progressive wager is 100 cents, not 200"),
        (wager("x", "r1", 1, amount=0), "a wager must be above $0"),
        (wager("x", "r1", 8), "table T1 has seats 1 to 6, not 8"),
        (WagerLocked("x", AT, TABLE, "r1", 1, "ace-high", 500), "offers no ace-high wager"),
        (
            settle("x", "r0", {1: ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "9h"]}),
            "duplicate card 9h",
        ),
        (settle("x", "r0", {1: ["9h", "Th", "Jh", "Qh", "Kh", "Ah"]}), "7 cards, got 6"),
        (
            settle("x", "r0", {1: ["2d", "5d", "7s", "9c", "Jd", "Ks", "3c"]}),
            "duplicate card 2d",  # the dealer holds the 2d too
        ),
        (MeterAdjusted("x", AT, POOL, "meter", -5, "tech-3", "   "), "who made it and why"),
        (MeterAdjusted("x", AT, POOL, "meter", -100, "tech-3", "fix"), "below its seed"),
        (HitVerified("x", AT, "nope/1/progressive", "supervisor-7"), "no pending payout"),
        (pool_opened("x"), "already open"),
    ],
    ids=[
        "unknown-table",
        "wrong-denomination",
        "zero-wager",
        "no-such-seat",
        "spot-not-offered",
        "duplicate-card",
        "six-cards",
        "card-shared-with-dealer",
        "adjustment-without-reason",
        "meter-below-seed",
        "verify-unknown-payout",
        "pool-opened-twice",
    ],
)
def test_brief_3_refused_event_is_journaled_as_rejected_with_reason_and_moves_no_meter(
    tmp_path: Path, event: AnyEvent, reason: str
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r0-w1", "r0", 1))
        before = snapshot(journal.state)
        pools_before = table_rows(path, "pools")
        receipt = journal.append(event)
        assert receipt.outcome == REJECTED
        assert not receipt.applied
        assert reason in receipt.reason
        assert receipt.effects == ()
        assert snapshot(journal.state) == before
    row = rows_of(path)[-1]
    assert (row["event_id"], row["outcome"], row["reason"], row["effects"]) == (
        "x", REJECTED, receipt.reason, "[]",
    )  # fmt: skip
    assert table_rows(path, "pools") == pools_before
    assert table_rows(path, "rounds") == [(TABLE, "r0", '[[1,"progressive",100]]')]
    report = verify(path)
    assert report.ok, report.problems
    assert report.pools == {POOL: SEED_CENTS + 28}


def test_brief_3_fault_is_journaled_and_moves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        before = snapshot(journal.state)
        receipt = journal.append(FaultRecorded("f1", AT, "table T1", "link lost", "no heartbeat"))
        assert (receipt.outcome, receipt.effects) == (APPLIED, ())
        assert snapshot(journal.state) == before
    assert rows_of(path)[-1]["kind"] == "fault"
    assert verify(path).ok


# --- the hash chain -------------------------------------------------------------------------


def test_brief_3_good_journal_chains_every_row_to_the_one_before(played: Path) -> None:
    rows = rows_of(played)
    assert [row["seq"] for row in rows] == list(range(1, len(rows) + 1))
    previous = GENESIS
    for row in rows:
        assert row["prev_hash"] == previous
        assert row["hash"] == row_hash(previous, row)
        previous = str(row["hash"])
    report = verify(played)
    assert (report.ok, report.rows, report.problems) == (True, len(rows), [])


def _update_event(raw: sqlite3.Connection, seq: int, change: Callable[[dict], None]) -> None:
    text = raw.execute("SELECT event FROM journal WHERE seq = ?", [seq]).fetchone()[0]
    document = json.loads(text)
    change(document)
    new_text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    raw.execute("UPDATE journal SET event = ? WHERE seq = ?", [new_text, seq])


def _seq_of(raw: sqlite3.Connection, event_id: str) -> int:
    return int(raw.execute("SELECT seq FROM journal WHERE event_id = ?", [event_id]).fetchone()[0])


def _rehash(raw: sqlite3.Connection, seq: int) -> None:
    row = dict(raw.execute("SELECT * FROM journal WHERE seq = ?", [seq]).fetchone())
    raw.execute("UPDATE journal SET hash = ? WHERE seq = ?", [row_hash(row["prev_hash"], row), seq])


def tamper_effect_text(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r1-w2")
    raw.execute(
        'UPDATE journal SET effects = replace(effects, \'"to_meter":"113/4"\', '
        '\'"to_meter":"114/4"\') WHERE seq = ?',
        [seq],
    )
    assert raw.total_changes == 1
    return [
        f"row {seq}: the row's contents do not match its hash",
        f"row {seq}: replay gives other effects than the journal records",
    ]


def tamper_event_amount(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r1-w2")
    _update_event(raw, seq, lambda event: event.update(amount_cents=500))
    return [
        f"row {seq}: the row's contents do not match its hash",
        (
            f"row {seq}: replay gives rejected 'the progressive wager is 100 cents, not 500', "
            "the journal says applied ''"
        ),
    ]


def tamper_hit_amount_in_effects(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r3-settle")
    effects = json.loads(
        raw.execute("SELECT effects FROM journal WHERE seq = ?", [seq]).fetchone()[0]
    )
    for effect in effects:
        if effect["effect"] == "payout":
            effect["win_cents"] += 100_000
    raw.execute(
        "UPDATE journal SET effects = ? WHERE seq = ?",
        [json.dumps(effects, sort_keys=True, separators=(",", ":")), seq],
    )
    return [f"row {seq}: the row's contents do not match its hash"]


def tamper_delete_middle_row(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r2-w4")
    raw.execute("DELETE FROM journal WHERE seq = ?", [seq])
    return [
        f"row {seq + 1}: expected row {seq}; rows are missing",
        f"row {seq + 1}: the chain is broken (previous hash differs)",
    ]


def tamper_swap_two_rows(raw: sqlite3.Connection) -> list[str]:
    first, second = _seq_of(raw, "r1-w1"), _seq_of(raw, "r1-w2")
    select = (
        "SELECT event_id, kind, at, event, outcome, reason, effects, prev_hash, hash "
        "FROM journal WHERE seq = ?"
    )
    update = (
        "UPDATE journal SET (event_id, kind, at, event, outcome, reason, effects, prev_hash, "
        "hash) = (?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE seq = ?"
    )
    one = raw.execute(select, [first]).fetchone()
    two = raw.execute(select, [second]).fetchone()
    raw.execute("BEGIN")
    raw.execute("UPDATE journal SET event_id = 'tmp', hash = 'tmp' WHERE seq = ?", [first])
    raw.execute(update, [*one, second])
    raw.execute(update, [*two, first])
    raw.execute("COMMIT")
    return [
        f"row {first}: the chain is broken (previous hash differs)",
        f"row {first}: the row's contents do not match its hash",
        f"row {second}: the chain is broken (previous hash differs)",
        f"row {second}: the row's contents do not match its hash",
    ]


def tamper_reorder_rows_keeping_content(raw: sqlite3.Connection) -> list[str]:
    """Move a row to the end (new seq), as if the order of events were rewritten."""
    seq = _seq_of(raw, "r3-w1")
    last = int(raw.execute("SELECT max(seq) FROM journal").fetchone()[0])
    raw.execute("UPDATE journal SET seq = ? WHERE seq = ?", [last + 1, seq])
    return [
        f"row {seq + 1}: expected row {seq}; rows are missing",
        f"row {last + 1}: the row's contents do not match its hash",
    ]


def tamper_pool_meter(raw: sqlite3.Connection) -> list[str]:
    text = raw.execute("SELECT state FROM pools WHERE pool_id = ?", [POOL]).fetchone()[0]
    document = json.loads(text)
    document["meter"] = str(Fraction(document["meter"]) + 10_000)
    raw.execute(
        "UPDATE pools SET state = ? WHERE pool_id = ?",
        [json.dumps(document, sort_keys=True, separators=(",", ":")), POOL],
    )
    return [f"pool {POOL}: the stored meters differ from the replay"]


def tamper_pool_counter(raw: sqlite3.Connection) -> list[str]:
    text = raw.execute("SELECT state FROM pools WHERE pool_id = ?", [POOL]).fetchone()[0]
    document = json.loads(text)
    document["hits_count"] -= 1
    raw.execute(
        "UPDATE pools SET state = ? WHERE pool_id = ?",
        [json.dumps(document, sort_keys=True, separators=(",", ":")), POOL],
    )
    return [f"pool {POOL}: the stored meters differ from the replay"]


def tamper_rehash_edited_row(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r1-w2")
    _update_event(raw, seq, lambda event: event.update(seat=5))
    _rehash(raw, seq)
    return [f"row {seq + 1}: the chain is broken (previous hash differs)"]


def tamper_add_phantom_open_round(raw: sqlite3.Connection) -> list[str]:
    raw.execute("INSERT INTO rounds VALUES ('T1', 'r9', '[[1,\"progressive\",100]]')")
    return ["rounds: the stored open rounds differ from the replay"]


def tamper_revision(raw: sqlite3.Connection) -> list[str]:
    raw.execute("UPDATE meta SET value = '7' WHERE key = 'revision'")
    return ["configuration revision: replay gives 2, stored 7"]


TAMPERING = [
    tamper_effect_text,
    tamper_event_amount,
    tamper_hit_amount_in_effects,
    tamper_delete_middle_row,
    tamper_swap_two_rows,
    tamper_reorder_rows_keeping_content,
    tamper_pool_meter,
    tamper_pool_counter,
    tamper_rehash_edited_row,
    tamper_add_phantom_open_round,
    tamper_revision,
]


@pytest.mark.parametrize("tamper", TAMPERING, ids=lambda tamper: tamper.__name__)
def test_brief_3_journal_is_append_only_and_tamper_evident_edit_detected(
    played: Path, connection: sqlite3.Connection, tamper: Callable[[sqlite3.Connection], list[str]]
) -> None:
    expected = tamper(connection)
    report = verify(played)
    assert not report.ok
    for problem in expected:
        assert problem in report.problems, report.problems


def test_brief_3_rehashed_row_is_still_caught_by_the_next_rows_link_only(
    played: Path, connection: sqlite3.Connection
) -> None:
    seq = _seq_of(connection, "r1-w2")
    _update_event(connection, seq, lambda event: event.update(seat=5))
    _rehash(connection, seq)
    problems = verify(played).problems
    assert f"row {seq}: the row's contents do not match its hash" not in problems
    assert f"row {seq}: the chain is broken (previous hash differs)" not in problems
    assert f"row {seq + 1}: the chain is broken (previous hash differs)" in problems


def test_brief_3_rehashing_the_last_row_is_caught_by_replay(
    played: Path, connection: sqlite3.Connection
) -> None:
    """No row follows the last one: the replay, not the chain, must catch its edit."""
    seq = _seq_of(connection, "r3-settle")
    _update_event(connection, seq, lambda event: event["hands"].update({"1": NOTHING}))
    _rehash(connection, seq)
    problems = verify(played).problems
    assert f"row {seq}: replay gives other effects than the journal records" in problems
    assert f"pool {POOL}: the stored meters differ from the replay" in problems


@pytest.mark.parametrize(
    ("payout_id", "status"),
    [("r1-settle/1/progressive", "pending"), ("r1-settle/2/progressive", "paid")],
    ids=["pending-hit", "paid-loss"],
)
def test_brief_3_payout_row_edited_in_place_is_detected(
    tmp_path: Path, payout_id: str, status: str
) -> None:
    """A payout row is what a supervisor is asked to pay and what reports read: it is checked."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        journal.append(settle("r1-settle", "r1", {1: FIVE_ACES, 2: NOTHING}))
        assert set(journal.state.pending) == {"r1-settle/1/progressive"}
    assert verify(path).ok
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        raw.execute(
            "UPDATE payouts SET win_cents = win_cents * 10 + 500, from_meter_cents = "
            "from_meter_cents * 10 WHERE payout_id = ? AND status = ?",
            [payout_id, status],
        )
        assert raw.total_changes == 1
    report = verify(path)
    assert not report.ok
    assert any(payout_id in problem or "payouts" in problem for problem in report.problems), (
        report.problems
    )


@pytest.mark.parametrize(
    "garble",
    [
        "UPDATE pools SET state = 'garbage'",
        "UPDATE tables SET config = '{}'",
        "INSERT INTO rounds VALUES ('T1', 'r9', 'x')",
    ],
    ids=["pool-state", "table-config", "round-wagers"],
)
def test_brief_3_garbled_materialized_row_is_reported_not_a_crash(
    played: Path, connection: sqlite3.Connection, garble: str
) -> None:
    """``verify`` reports a problem or raises JournalError; it does not crash on bad JSON."""
    connection.execute(garble)
    try:
        report = verify(played)
    except JournalError:
        pass
    else:
        assert not report.ok
    with pytest.raises(JournalError):  # and the controller fails closed with its own error
        Journal(played)


def test_brief_3_verify_of_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no such journal"):
        verify(tmp_path / "absent.db")
    assert not (tmp_path / "absent.db").exists()


# --- replay ---------------------------------------------------------------------------------


def test_brief_3_replay_from_empty_reproduces_the_exact_meters(played: Path) -> None:
    with Journal(played) as journal:
        journal.append(
            PoolTermsChanged(
                "terms", AT, POOL, PAYTABLE, 1_500_000, Decimal("0.3"), "gm-1", "new season"
            )
        )
        journal.append(wager("r5-w1", "r5", 1))
        journal.append(settle("r5-settle", "r5", {1: STRAIGHT_FLUSH}))  # queued terms apply
        journal.append(wager("r6-w1", "r6", 1))
        shown = {pool_id: pool.meter_cents for pool_id, pool in journal.state.pools.items()}
        stored = snapshot(journal.state)
        pool = journal.state.pools[POOL]
        events = [decode_event(str(row["event"])) for row in journal.rows()]
    assert pool.terms.seed_cents == 1_500_000
    assert pool.meter_cents == 1_500_000 + 30  # the new seed, one 30 % contribution
    report = verify(played)
    assert report.ok, report.problems
    assert report.pools == shown
    replayed = replay(events)
    assert snapshot(replayed) == stored
    assert replayed.pools[POOL].money_in() == replayed.pools[POOL].money_held_or_paid()


# --- schema migrations ----------------------------------------------------------------------


def test_brief_3_fresh_journal_is_migrated_to_the_latest_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal(path).close()
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {
            row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert {"journal", "pools", "tables", "rounds", "payouts", "meta"} <= tables
    with opened_journal(path) as journal:  # reopening migrates nothing again and keeps rows
        assert journal.state.pools
    with Journal(path) as journal:
        assert len(list(journal.rows())) == 2


def test_brief_3_journal_from_a_newer_controller_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path):
        pass
    newer = len(MIGRATIONS) + 1
    with closing(sqlite3.connect(path)) as raw:
        raw.execute(f"PRAGMA user_version = {newer}")
    with pytest.raises(
        SchemaError,
        match=rf"schema version {newer}, this controller knows up to {len(MIGRATIONS)}: "
        "upgrade the controller",
    ):
        Journal(path)
    with closing(sqlite3.connect(path)) as raw:  # left as it was
        assert raw.execute("PRAGMA user_version").fetchone()[0] == newer
        assert raw.execute("SELECT count(*) FROM journal").fetchone()[0] == 2


def _unique_indexes(path: Path) -> list[list[str]]:
    """The columns of each UNIQUE index of the journal table."""
    with closing(sqlite3.connect(path)) as raw:
        return [
            [row[2] for row in raw.execute(f"PRAGMA index_info('{name}')")]
            for _seq, name, unique, *_ in raw.execute("PRAGMA index_list(journal)")
            if unique
        ]


def test_brief_3_journal_of_schema_5_is_upgraded_with_its_rows_and_chain_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.db"
    with monkeypatch.context() as patch:  # a journal written by the controller of schema 5
        patch.setattr(store, "migrate", lambda database: migrate(database, 5))
        with opened_journal(path) as journal:
            play_rounds(journal)
            state = snapshot(journal.state)
    assert sorted(_unique_indexes(path)) == [["event_id"], ["hash"]]
    before = {table: table_rows(path, table) for table in ("journal", "pools", "payouts")}

    with Journal(path) as journal:  # this controller migrates it on opening
        assert snapshot(journal.state) == state
        assert journal.append(wager("r4-w1", "r4", 1)).seq == len(before["journal"]) + 1
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 6
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        with pytest.raises(sqlite3.IntegrityError):  # the file still refuses an id twice
            raw.execute(
                "INSERT INTO journal SELECT seq + 100, event_id, kind, at, event, outcome, "
                "reason, effects, prev_hash, hash || 'x' FROM journal WHERE seq = 1"
            )
    assert _unique_indexes(path) == [["event_id"]]  # the random-page index on hash is gone
    assert table_rows(path, "journal")[: len(before["journal"])] == before["journal"]
    assert table_rows(path, "pools") != before["pools"]  # the new wager moved the meter
    assert table_rows(path, "payouts") == before["payouts"]
    assert verify(path).ok


def test_brief_3_a_file_that_is_not_a_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal(path)


# --- two writers ----------------------------------------------------------------------------


def test_brief_3_second_writer_on_the_same_file_is_caught_up_before_the_next_append(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as first, Journal(path) as second:
        first.append(wager("a-1", "r1", 1))
        assert second.append(wager("b-2", "r1", 2)).seq == 4  # it caught up with the first
        second.append(MeterAdjusted("b-adj", AT, POOL, "meter", 1_000, "tech-3", "sign fix"))
        assert first.state.pools[POOL].wagers_count == 1  # stale until it writes

        receipt = first.append(wager("a-3", "r1", 3))
        assert receipt.seq == 6
        pool = first.state.pools[POOL]
        assert pool.wagers_count == 3
        assert pool.adjustments_cents == 1_000
        assert pool.meter == SEED_CENTS + 1_000 + 3 * Fraction(113, 4)
        assert {wager.seat for wager in first.state.rounds[TABLE, "r1"]} == {1, 2, 3}
        # An event the other writer journaled is a duplicate for this one too.
        assert first.append(wager("b-2", "r1", 2)).duplicate
        assert second.append(wager("a-3", "r1", 3)).duplicate

        second.append(settle("r1-settle", "r1", {1: NOTHING, 2: FIVE_ACES, 3: THIRD}))
        first.append(HitVerified("a-verify", AT, "r1-settle/2/progressive", "supervisor-7"))
        assert first.state.pending == {}
        with Journal(path) as third:
            assert snapshot(third.state) == snapshot(first.state)
    rows = rows_of(path)
    assert [row["seq"] for row in rows] == list(range(1, 9))
    report = verify(path)
    assert report.ok, report.problems


# --- write failures -------------------------------------------------------------------------


def test_brief_3_locked_database_fails_the_append_and_leaves_state_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.db.execute("PRAGMA busy_timeout=50")
        state, rows = journal.state, rows_of(path)
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN EXCLUSIVE")
            with pytest.raises(JournalError, match="cannot write the journal: database is locked"):
                journal.append(wager("r1-w2", "r1", 2))
            assert journal.state is state
            other.execute("ROLLBACK")
        assert rows_of(path) == rows
        receipt = journal.append(wager("r1-w2", "r1", 2))  # the database is back
        assert (receipt.seq, receipt.applied, receipt.duplicate) == (4, True, False)
    assert verify(path).ok


def test_brief_3_failure_after_the_journal_row_rolls_back_the_whole_transaction(
    tmp_path: Path,
) -> None:
    """A write that fails half-way (here: the pools table refuses) leaves no journal row."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        state, rows, pools = journal.state, rows_of(path), table_rows(path, "pools")
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute(
                "CREATE TRIGGER no_pool_writes BEFORE INSERT ON pools "
                "BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END"
            )
        with pytest.raises(
            JournalError, match=r"cannot write the journal: disk full \(simulated\)"
        ):
            journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
        assert journal.state is state
        assert rows_of(path) == rows
        assert table_rows(path, "pools") == pools
        assert table_rows(path, "rounds") == [(TABLE, "r1", '[[1,"progressive",100]]')]

        # A refused event touches no pool: it is still journaled, in its own transaction.
        refused = journal.append(wager("r1-bad", "r1", 4, amount=300))
        assert (refused.seq, refused.outcome) == (4, REJECTED)

        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("DROP TRIGGER no_pool_writes")
        receipts = journal.append_many([wager("r1-w2", "r1", 2), wager("r1-w3", "r1", 3)])
        assert [(r.seq, r.duplicate) for r in receipts] == [(5, False), (6, False)]
        assert journal.state.pools[POOL].wagers_count == 3
    report = verify(path)
    assert report.ok, report.problems


# --- prepared, committed, read ----------------------------------------------------------------


def test_brief_3_readers_see_a_batch_only_once_it_is_committed(tmp_path: Path) -> None:
    with opened_journal(tmp_path / "journal.db") as journal:
        rows = "SELECT count(*) AS n FROM journal"
        before = next(iter(journal.reader.query(rows)))["n"]
        transaction = journal.prepare([wager("a-1", "r1", 1), wager("a-2", "r1", 2)])
        assert next(iter(journal.reader.query(rows)))["n"] == before  # written, not durable
        assert journal.state.pools[POOL].wagers_count == 0  # nor adopted
        with pytest.raises(JournalError, match="must be committed"):
            journal.adopt(transaction)
        transaction.commit()
        assert next(iter(journal.reader.query(rows)))["n"] == before + 2
        assert [receipt.seq for receipt in journal.adopt(transaction)] == [3, 4]
        assert journal.state.pools[POOL].wagers_count == 2
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            journal.reader.execute("DELETE FROM journal")
