"""Voids cannot pump the meter (docs/money.md "Voids", docs/faults.md "Voids").

A void after lock returns the wagers and reverses their contributions exactly, remainders
included, so that bet, lock and void, again and again, leave every pool as it was. A hit on
the pool between the lock and the void keeps the books balanced. A device may void only its
table's round being dealt; a round the controller held waits for a supervisor. A journal
written before all this (``tests/data/journal_before_void_refunds.db``) replays to the same
meters, and voids keep their first meaning there.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from itertools import count
from pathlib import Path

import pytest

from controller.effects import (
    Balances,
    Contributed,
    ContributionRefunded,
    PayoutMade,
    decode_effects,
    parse_fraction,
)
from controller.events import (
    AnyEvent,
    BetSensed,
    BetsLocked,
    CardDealt,
    OperatorEnrolled,
    PoolOpened,
    RoundSettled,
    RoundVoided,
    TableConfigured,
    WagerLocked,
    decode_event,
)
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.table_state import Phase
from controller.ledger_journal.sqlite import Journal, verify
from controller.reports.reconciliation import reconcile
from controller.runtime.broadcast import Broadcast
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer

AT = "2026-11-29T15:00:00Z"
SEED = 1_000_000
DEALER = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]
SEVEN_CARD_FLUSH = ["3s", "4s", "5s", "6s", "7s", "8s", "9s"]
OLD_JOURNAL = Path(__file__).parents[1] / "data" / "journal_before_void_refunds.db"
ids = count(1)


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


def run(state: LedgerState, *events: AnyEvent) -> tuple[LedgerState, list[object]]:
    effects: list[object] = []
    for event in events:
        state, more = apply(state, event)
        effects.extend(more)
    return state, effects


def device(kind: type, *fields: object, table: str = "T1") -> AnyEvent:
    seq = next(ids)
    return kind(f"{table}/dev/{seq}", AT, table, "dev", seq, *fields)  # type: ignore[no-any-return]


def void(round_id: str, by: str = "device dealer", table: str = "T1") -> RoundVoided:
    return RoundVoided(f"void-{next(ids)}", AT, table, round_id, by, "misdeal", True)


def locked(state: LedgerState, round_id: str, seats: range) -> tuple[LedgerState, list[object]]:
    """Progressive chips on ``seats`` and a bonus chip on seat 1, then "no more bets"."""
    chips = [device(BetSensed, seat, "progressive", True) for seat in seats]
    bonus = device(BetSensed, 1, "bonus", True, 2_500)
    return run(state, *chips, bonus, device(BetsLocked, round_id))


def lock_progressive(state: LedgerState, round_id: str, seats: range) -> LedgerState:
    return locked(state, round_id, seats)[0]


@pytest.fixture
def voids_state() -> LedgerState:
    """One pool at sub-cent rates with a limit close above the seed; two tables feed it."""
    tables = {"fortune-1": paytable("fortune-1"), "progressive-1": paytable("progressive-1")}
    state, _ = run(
        LedgerState(),
        PoolOpened("pool", AT, "P1", "progressive-1", SEED, Decimal("0.2875"), Decimal("0.0125"),
                   limit_cents=SEED + 100),
        *(
            TableConfigured(f"cfg-{table}", AT, table, tables, bonus="fortune-1",
                            progressive="progressive-1", pool_id="P1")
            for table in ("T1", "T2")
        ),
    )  # fmt: skip
    return state


def test_bet_lock_void_cycles_leave_meter_reserve_overflow_and_counters_exactly_as_before(
    voids_state: LedgerState,
) -> None:
    state, before = voids_state, voids_state.pools["P1"]
    for cycle in range(12):
        # Six wagers of 28.75 cents pass the limit: part of each round goes to the overflow.
        state = lock_progressive(state, f"R{cycle}", range(1, 7))
        pool = state.pools["P1"]
        assert pool.meter > before.meter
        assert pool.overflow > 0
        assert pool.reserve.denominator > 1  # a carried remainder, reversed exactly too
        assert pool.wagers_count == before.wagers_count + 6
        state, effects = run(state, device(CardDealt, f"R{cycle}", 1, "As"), void(f"R{cycle}"))
        assert state.pools["P1"] == before  # to the fraction of a cent, counters included
        refunds = [e for e in effects if isinstance(e, ContributionRefunded)]
        assert [refund.seat for refund in refunds] == [1, 2, 3, 4, 5, 6]
        returned = [e for e in effects if isinstance(e, PayoutMade)]
        assert sum(p.returned_cents for p in returned) == 6 * 100 + 2_500
        assert state.table_states["T1"].phase is Phase.BETTING
    # Direct entry, voided by a supervisor: the same.
    locks = [WagerLocked(f"d-{seat}", AT, "T2", "D1", seat, "progressive", 100) for seat in (1, 2)]
    state, _ = run(state, *locks, void("D1", by="Dana", table="T2"))
    assert state.pools["P1"] == before


def test_void_after_an_intervening_hit_on_the_pool_keeps_conservation(
    voids_state: LedgerState,
) -> None:
    state, lock = locked(voids_state, "R1", range(1, 3))
    contributed = [e for e in lock if isinstance(e, Contributed)]
    # Another table hits 100 % of the meter while R1 is dealt: the meter resets to its seed.
    state, hit = run(
        state,
        WagerLocked("t2-w", AT, "T2", "D1", 1, "progressive", 100),
        RoundSettled("t2-s", AT, "T2", "D1", DEALER, {"1": SEVEN_CARD_FLUSH}),
    )
    assert any(isinstance(e, PayoutMade) and e.from_meter_cents for e in hit)
    after_hit = state.pools["P1"]
    state, effects = run(state, void("R1"))
    pool = state.pools["P1"]
    refunds = [e for e in effects if isinstance(e, ContributionRefunded)]
    # Exactly what the lock added is reversed, whatever account now holds it.
    assert [(r.to_meter, r.to_reserve, r.to_overflow) for r in refunds] == [
        (c.to_meter, c.to_reserve, c.to_overflow) for c in contributed
    ]
    for refund in refunds:
        taken = sum(
            map(parse_fraction, (refund.from_meter, refund.from_reserve, refund.from_overflow))
        )
        assert taken == sum(
            map(parse_fraction, (refund.to_meter, refund.to_reserve, refund.to_overflow))
        )
    assert pool.money_in() == pool.money_held_or_paid()
    assert pool.meter_cents == SEED  # the meter shows its seed: the house made up the rest
    assert pool.paid_cents == after_hit.paid_cents  # the winner keeps the win
    house = sum(r.reseed_from_house_cents for r in refunds)
    assert pool.house_funding_cents == after_hit.house_funding_cents + house
    assert pool.contributions == after_hit.contributions - sum(
        parse_fraction(part)
        for c in contributed
        for part in (c.to_meter, c.to_reserve, c.to_overflow)
    )
    assert (pool.wagers_count, pool.wagers_cents) == (
        after_hit.wagers_count - 2,
        after_hit.wagers_cents - 200,
    )
    (balances,) = [e for e in effects if isinstance(e, Balances)]
    assert parse_fraction(balances.meter) == pool.meter


def enrolled(state: LedgerState) -> LedgerState:
    """A site with a manager and a supervisor (the ledger then checks every supervisor action)."""
    return run(
        state,
        OperatorEnrolled("op-1", AT, "Morgan", "manager", "salt", "hash", "scrypt", "config"),
        OperatorEnrolled("op-2", AT, "Dana", "supervisor", "salt", "hash", "scrypt", "Morgan"),
    )[0]


def test_a_device_cannot_void_a_held_round_and_a_supervisor_can(voids_state: LedgerState) -> None:
    before = enrolled(voids_state)
    state = lock_progressive(before, "R1", range(1, 3))
    state, _ = run(state, device(CardDealt, "R1", 1, "Ac"), device(CardDealt, "R1", 2, "Ac"))
    assert state.table_states["T1"].phase is Phase.HELD
    with pytest.raises(LedgerError, match=r"held for a supervisor.*only a supervisor may void it"):
        apply(state, void("R1"))
    with pytest.raises(LedgerError, match="'Eve' is not an enrolled operator"):
        apply(state, void("R1", by="Eve"))
    voided, effects = run(state, void("R1", by="Dana"))
    assert voided.pools["P1"] == before.pools["P1"]
    assert voided.table_states["T1"].phase is Phase.BETTING
    assert len([e for e in effects if isinstance(e, ContributionRefunded)]) == 2


def test_a_device_may_void_only_its_tables_round_while_it_is_dealt(
    voids_state: LedgerState,
) -> None:
    state = lock_progressive(voids_state, "R1", range(1, 2))
    state, _ = run(state, WagerLocked("w", AT, "T2", "D1", 1, "progressive", 100))
    # Another table's round, from this table's device: not a round of this table.
    with pytest.raises(LedgerError, match="round D1 is not open on table T1"):
        apply(state, void("D1"))
    # A direct-entry round on its own table (no deal in progress there): a supervisor's call.
    with pytest.raises(LedgerError, match="a device may void only the round being dealt"):
        apply(state, void("D1", table="T2"))
    state, _ = run(state, void("R1"))  # the round being dealt: as a dealer may
    with pytest.raises(LedgerError, match="round R1 is not open"):
        apply(state, void("R1"))  # once over, never again


def test_a_void_journaled_before_refunds_keeps_its_first_meaning(voids_state: LedgerState) -> None:
    """An old event (no ``refund_contributions``): wagers back, contributions kept, as played."""
    state = lock_progressive(voids_state, "R1", range(1, 3))
    state, _ = run(state, device(CardDealt, "R1", 1, "Ac"), device(CardDealt, "R1", 1, "Ac"))
    old = decode_event(
        '{"at":"2026-11-29T15:00:00Z","by":"device dealer","event_id":"v","kind":"round-voided",'
        '"reason":"misdeal","round_id":"R1","table_id":"T1"}'
    )
    assert isinstance(old, RoundVoided)
    assert not old.refund_contributions
    voided, effects = run(state, old)  # a device voiding a held round was allowed then
    assert voided.pools["P1"] == state.pools["P1"]
    assert not [e for e in effects if isinstance(e, ContributionRefunded)]


def test_a_journal_written_before_void_refunds_replays_to_the_same_meters(tmp_path: Path) -> None:
    """The controller of commit 5922130 wrote the file (tests/data/make_journal_...py)."""
    path = tmp_path / "journal.db"
    shutil.copyfile(OLD_JOURNAL, path)
    report = verify(path)  # chain, replay of every row's outcome and effects, stored state
    assert report.ok, report.problems
    assert report.pools == {"P1": 1_000_087}
    assert all(period.balanced() for period in reconcile(_rows(path), None, None).values())
    with Journal(path) as journal:
        pool = journal.state.pools["P1"]
        assert (pool.meter, pool.reserve, pool.overflow) == (
            Fraction(1_000_087),
            Fraction(4),
            Fraction(0),
        )
        assert (pool.contributions, pool.wagers_count) == (Fraction(240), 8)
        # The round left open is read with the contributions its lock journaled ...
        (row,) = [r for r in journal.rows() if _locks(r, "R3")]
        contributed = [e for e in decode_effects(row["effects"]) if isinstance(e, Contributed)]
        meter_before_lock = _meter_before(journal, row["seq"])
        # ... and voided now by the dealer, those are reversed exactly.
        receipt = journal.append(void("R3"))
        assert receipt.applied, receipt.reason
        refunds = [e for e in receipt.effects if isinstance(e, ContributionRefunded)]
        assert [(r.to_meter, r.to_reserve, r.to_overflow) for r in refunds] == [
            (c.to_meter, c.to_reserve, c.to_overflow) for c in contributed
        ]
        assert journal.state.pools["P1"].meter == meter_before_lock
    report = verify(path)
    assert report.ok, report.problems
    assert all(period.balanced() for period in reconcile(_rows(path), None, None).values())


def _locks(row: dict[str, object], round_id: str) -> bool:
    event = decode_event(str(row["event"]))
    return isinstance(event, BetsLocked) and event.round_id == round_id


def _rows(path: Path) -> list[dict[str, object]]:
    with Journal(path) as journal:
        return list(journal.rows())


def _meter_before(journal: Journal, seq: int) -> Fraction:
    meter = Fraction(0)
    for row in journal.rows():
        if row["seq"] >= seq:
            break
        for effect in decode_effects(row["effects"]):
            if isinstance(effect, Balances):
                meter = parse_fraction(effect.meter)
    return meter


def test_reversed_contributions_are_counted_in_the_metrics(tmp_path: Path) -> None:
    """``jackpotd_contributions_refunded_dollars_total``: what voids took back, per table."""
    tables = {"fortune-1": paytable("fortune-1"), "progressive-1": paytable("progressive-1")}
    with Journal(tmp_path / "journal.db") as journal:
        metrics = ControllerMetrics(journal, Sequencer(journal, Broadcast()), None)
        receipts = journal.append_many([
            PoolOpened("pool", AT, "P1", "progressive-1", SEED, Decimal("0.28")),
            TableConfigured("cfg", AT, "T1", tables, bonus="fortune-1",
                            progressive="progressive-1", pool_id="P1"),
            *(WagerLocked(f"w{seat}", AT, "T1", "D1", seat, "progressive", 100) for seat in (1, 2)),
            void("D1", by="Dana"),
        ])  # fmt: skip
        assert all(receipt.applied for receipt in receipts)
        metrics.observe(receipts)
        text = metrics.exposition("")[0].decode()
    assert 'jackpotd_contributions_dollars_total{pool="P1",table="T1"} 0.56' in text
    assert 'jackpotd_contributions_refunded_dollars_total{pool="P1",table="T1"} 0.56' in text
