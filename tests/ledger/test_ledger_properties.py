"""Property tests of the pure ledger: random event histories never lose or invent a cent.

Hypothesis plays random histories through :func:`controller.ledger.apply.apply` from an empty
:class:`~controller.ledger.apply.LedgerState`: one or two pools with random rates, seeds and limits;
tables with a progressive paytable (Progressive Paytables 1, 4 with its reserve and returned
wager, and 5 with its fully wild joker) and Fortune Paytable 1; progressive and bonus wagers;
rounds dealt from one 53-card deck, biased toward five aces, seven-card straight flushes and
royal matches so that meters are really hit; bonus wagers inside and outside each table's wager
limits (a table configured without limits, as before they existed, takes any); rounds voided at
once or left open while other tables play, hit the pool, adjust it or change its terms, then
voided (reversing their contributions, or with a void's first meaning, keeping them); meter
adjustments and terms changes, valid or not; verifications of pending hits; and events that
must be refused. After every event:

(a) for every pool, money in (contributions + house funding + adjustments), tallied here from
    the events and effects, equals meter + reserve + overflow + paid, exactly (docs/money.md);
(b) the meter never shows below its seed, nor above its limit (docs/money.md);
(c) a meter only goes down with a recorded win, an adjustment or a terms change applied now
    (docs/money.md);
(d) the same events applied twice from empty (and again after a journal round trip) give
    identical states and effects, and a refused event leaves the state unchanged (docs/journal.md);
(e) the from-meter amounts of the payouts add up to the pool's paid total;
(f) a void reverses exactly what its wagers contributed at lock, and the qualifying-wager
    counters go back down; voided at once, the pool is exactly as it was before the round.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.journal.journal_rig import DEALER, NOTHING, pool_opened, table_configured
from support.journal.journal_rig import FIVE_ACES as HIT
from support.ledger.histories import (
    ACCOUNTS,
    AT,
    BONUS,
    PAYTABLES,
    RATES,
    RESERVE_RATES,
    Harness,
    play,
)

from controller.effects import (
    encode_effects,
)
from controller.events import (
    RoundSettled,
    TableConfigured,
    WagerLocked,
    decode_event,
    encode_event,
)
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.pool import Pool, PoolError, PoolTerms
from controller.pool_events import (
    DISPOSITIONS,
    FINAL_AWARD,
    PoolResumed,
    PoolRetired,
    PoolSuspended,
    PoolTransferred,
)

if TYPE_CHECKING:
    from controller.events import AnyEvent

PROGRESSIVE_WAGER = {"progressive-1": 100, "progressive-4": 500, "progressive-5": 100}

EXAMPLES = 200


# --- building random histories ------------------------------------------------------------


def replay(events: list[AnyEvent]) -> tuple[LedgerState, list[bytes | None]]:
    state = LedgerState()
    outcomes: list[bytes | None] = []
    for event in events:
        try:
            state, effects = apply(state, event)
        except LedgerError:
            outcomes.append(None)
        else:
            outcomes.append(encode_effects(effects))
    return state, outcomes


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- the properties -----------------------------------------------------------------------


@pytest.mark.slow
@SETTINGS
@given(st.data())
def test_money_identity_every_pool_balances_to_the_cent_after_every_event(
    data: st.DataObject,
) -> None:
    """(a), (b), (c) and (e), checked by the harness after each event.

    docs/money.md, "The identity the property tests prove".
    """
    harness = play(data)
    assert harness.events


@pytest.mark.slow
@SETTINGS
@given(st.data())
def test_journal_replay_is_deterministic_and_refused_events_change_nothing(
    data: st.DataObject,
) -> None:
    """(d): the same events, applied twice and after a journal round trip, agree exactly.

    docs/journal.md.
    """
    harness = play(data)
    first_state, first = replay(harness.events)
    second_state, second = replay(harness.events)
    assert first == second == harness.outcomes
    assert first_state == second_state == harness.state
    journaled = [decode_event(encode_event(event)) for event in harness.events]
    assert journaled == harness.events
    third_state, third = replay(journaled)
    assert third == first
    assert third_state == first_state


def test_hypothesis_histories_really_hit_the_meters_and_void_rounds() -> None:
    """Meter hits and voids are common enough for the properties to mean something.

    The deals are biased toward hits; voids come both at once and after a hit, a reseed or a
    change of terms has moved the pool.
    """
    hits: list[int] = []
    voids: list[int] = []
    shortfalls: list[int] = []

    # Derandomized: a statement about how often things happen must not depend on the run's luck.
    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        harness = play(data)
        hits.append(harness.hits)
        voids.append(harness.voids)
        shortfalls.append(harness.shortfalls)

    run()
    assert sum(hits) > 0
    assert sum(voids) > 0
    assert sum(shortfalls) > 0


DEALER_PLAIN = ("3c", "4c", "5h", "7s", "9d", "Jh", "Qs")
PAIR_OF_KINGS = ("Kc", "Kd", "2h", "4s", "6d", "8s", "Tc")
FIVE_ACES = ("Ac", "Ad", "Ah", "As", "Jk", "2d", "3d")


@pytest.mark.parametrize("seat", ["9", "0", "-3"])
def test_rules_8_hand_for_a_seat_the_table_does_not_have_is_refused(seat: str) -> None:
    """A two-seat table: a hand "at seat 9" is not a hand at the table and earns no Envy.

    docs/rules.md § 8; docs/architecture.md, "The standards it meets".
    """
    harness = Harness()
    harness.submit(
        TableConfigured(
            event_id="e1",
            at=AT,
            table_id="T1",
            paytables={BONUS: PAYTABLES[BONUS]},
            seats=2,
            bonus=BONUS,
        ),
        valid=True,
    )
    harness.submit(
        WagerLocked(
            event_id="e2",
            at=AT,
            table_id="T1",
            round_id="r1",
            seat=1,
            spot="bonus",
            amount_cents=500,
        ),
        valid=True,
    )
    settled = RoundSettled(
        event_id="e3",
        at=AT,
        table_id="T1",
        round_id="r1",
        dealer=list(DEALER_PLAIN),
        hands={"1": list(PAIR_OF_KINGS), seat: list(FIVE_ACES)},
    )
    with pytest.raises(LedgerError):
        apply(harness.state, settled)


# --- the same rules on a bare pool, many more steps ---------------------------------------

POOL_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("contribute"), st.integers(1, 10_000)),
        st.tuples(
            st.just("pay"),
            st.sampled_from([Fraction(1), Fraction(1, 10), Fraction(1, 5), Fraction(1, 100)]),
            st.integers(1, 3),
        ),
        st.tuples(st.just("adjust"), st.sampled_from(ACCOUNTS), st.integers(-100_000, 100_000)),
        st.tuples(
            st.just("terms"),
            st.integers(0, 1_000_000),
            st.sampled_from(RATES),
            st.none() | st.integers(0, 1_500_000),
            st.booleans(),
        ),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 1_000_000),
    rate=st.sampled_from(RATES),
    reserve=st.sampled_from(RESERVE_RATES),
    extra=st.none() | st.integers(0, 100_000),
    ops=POOL_OPS,
)
def test_money_identity_holds_for_any_sequence_of_operations(
    seed: int, rate: str, reserve: str, extra: int | None, ops: list[tuple[object, ...]]
) -> None:
    limit = None if extra is None else seed + extra
    pool = Pool.open("P", PoolTerms(seed, Fraction(rate), Fraction(reserve), limit))
    paid = 0
    for op in ops:
        before = pool
        try:
            match op:
                case ("contribute", int(wager)):
                    pool, _ = pool.contribute(wager)
                    assert pool.meter >= before.meter
                case ("pay", Fraction() as percent, int(ways)):
                    pool, payment = pool.pay(percent, ways=ways)
                    assert payment.paid_cents % ways == 0
                    assert payment.paid_cents == (before.meter * percent // ways) * ways
                    paid += payment.paid_cents
                case ("adjust", str(account), int(cents)):
                    pool = pool.adjust(account, cents)
                case (
                    "terms",
                    int(new_seed),
                    str(new_rate),
                    (int() | None) as new_limit,
                    bool(now),
                ):
                    terms = PoolTerms(new_seed, Fraction(new_rate), limit_cents=new_limit)
                    pool = pool.change_terms(terms, 2, now=now)
                case _:
                    pytest.fail(f"unknown op {op!r}")
        except PoolError:
            assert pool is before
        assert pool.money_in() == pool.money_held_or_paid()
        assert pool.paid_cents == paid
        assert pool.meter_cents >= pool.terms.seed_cents
        if pool.terms.limit_cents is not None:
            assert pool.meter_cents <= pool.terms.limit_cents
        assert pool.reserve >= 0
        assert pool.overflow >= 0


# --- a pool's life: suspended, resumed, transferred -----------------------------------------

LIFE_POOLS = ("pool-a", "pool-b")
LIFE_TABLES = {"T1": "pool-a", "T2": "pool-b"}
LIFE_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("round"), st.sampled_from(sorted(LIFE_TABLES)), st.booleans()),
        st.tuples(st.just("suspend"), st.sampled_from(LIFE_POOLS)),
        st.tuples(st.just("resume"), st.sampled_from(LIFE_POOLS)),
        st.tuples(st.just("transfer"), st.sampled_from(LIFE_POOLS), st.sampled_from(LIFE_POOLS)),
        st.tuples(st.just("retire"), st.sampled_from(LIFE_POOLS), st.sampled_from(DISPOSITIONS)),
    ),
    max_size=40,
)


def _life_event(number: int, op: tuple[object, ...]) -> list[AnyEvent]:
    """The events of one operation of :data:`LIFE_OPS` (the ledger refuses those it must)."""
    match op:
        case ("round", str(table), bool(hit)):
            round_id = f"r{number}"
            hand = HIT if hit else NOTHING
            return [
                WagerLocked(f"{round_id}-w", AT, table, round_id, 1, "progressive", 100),
                RoundSettled(f"{round_id}-s", AT, table, round_id, DEALER, {"1": hand}),
            ]
        case ("suspend", str(pool)):
            return [PoolSuspended(f"s{number}", AT, pool, "sup", "a malfunction")]
        case ("resume", str(pool)):
            return [PoolResumed(f"u{number}", AT, pool, "mgr", "repaired")]
        case ("transfer", str(pool), str(to)):
            return [PoolTransferred(f"t{number}", AT, pool, to, "mgr", "table removed")]
        case ("retire", str(pool), str(disposition)):
            award = "seat 1, slip 9001" if disposition == FINAL_AWARD else ""
            return [PoolRetired(f"x{number}", AT, pool, disposition, "mgr", "closed", award)]
    pytest.fail(f"unknown op {op!r}")


@settings(max_examples=150, deadline=None)
@given(
    limit=st.none() | st.integers(0, 20_000),
    ops=LIFE_OPS,
)
def test_r432_1838_4_transfers_and_retirements_conserve_every_cent_over_any_history(
    limit: int | None, ops: list[tuple[object, ...]]
) -> None:
    """What came in is on the pools' meters, reserves, overflows, paid or orphaned, summed.

    docs/money.md, "A pool's life": a transfer moves money exactly (sub-cent parts carried) and
    invents none; a retirement disposes of every cent (a final award, the orphaned); each
    pool's own identity holds with what it sent and received; a suspended pool's meters never
    move, and it takes no wager.
    """
    second = pool_opened("open-b", "pool-b")
    if limit is not None:
        second = msgspec.structs.replace(second, limit_cents=second.seed_cents + limit)
    events: list[AnyEvent] = [pool_opened("open-a", "pool-a"), second]
    for table, pool_id in LIFE_TABLES.items():
        configured = table_configured(f"table-{table}", table)
        events.append(msgspec.structs.replace(configured, pool_id=pool_id))
    for number, op in enumerate(ops):
        events += _life_event(number, op)
    state = LedgerState()
    for event in events:
        before = state
        try:
            state, _ = apply(state, event)
        except LedgerError:
            assert state is before
            continue
        for pool in state.pools.values():
            assert pool.money_in() == pool.money_held_or_paid()
            if pool.pool_id in before.pools and before.pools[pool.pool_id].status == "retired":
                assert pool == before.pools[pool.pool_id]  # a retired pool refuses everything
            if pool.status == "suspended" and pool.pool_id in before.pools:
                was = before.pools[pool.pool_id]
                if was.status == "suspended" and not isinstance(
                    event, PoolTransferred | PoolRetired
                ):
                    assert (pool.meter, pool.reserve, pool.overflow) == (
                        was.meter, was.reserve, was.overflow,
                    )  # fmt: skip
        pools = state.pools.values()
        came_in = sum(
            (p.contributions + p.house_funding_cents + p.adjustments_cents for p in pools),
            Fraction(0),
        )
        held = sum(
            (p.meter + p.reserve + p.overflow + p.paid_cents + p.orphaned for p in pools),
            Fraction(0),
        )
        assert came_in == held
        assert sum((p.transferred_in for p in pools), Fraction(0)) == sum(
            (p.transferred_out for p in pools), Fraction(0)
        )
