"""Random event histories played through the pure ledger, with the money tallied beside it."""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from typing import TYPE_CHECKING

import msgspec
from hypothesis import strategies as st

from controller.effects import (
    Adjusted,
    Balances,
    Contributed,
    ContributionRefunded,
    MeterPaid,
    PayoutMade,
    TermsChanged,
    encode_effects,
    parse_fraction,
)
from controller.events import (
    FaultRecorded,
    HitVerified,
    MeterAdjusted,
    PoolOpened,
    PoolTermsChanged,
    RoundSettled,
    RoundVoided,
    SpotLimits,
    TableConfigured,
    WagerLocked,
)
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.rules.cards import DECK
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import AnyEvent
    from controller.ledger.pool import Pool

AT = "2024-05-01T12:00:00Z"
RATES = ("0.28", "0.0075", "0.01", "0.17", "0.003", "0.0001", "0.333")
RESERVE_RATES = ("0", "0", "0.01", "0.0025", "0.05")
PROGRESSIVES = ("progressive-1", "progressive-4", "progressive-5")
BONUS = "fortune-1"
PAYTABLES = {
    name: (resources.files("controller") / "paytables" / f"{name}.toml").read_text()
    for name in (*PROGRESSIVES, BONUS)
}


BIG_HANDS = (
    "Ac Ad Ah As Jk 2d 3d",  # five aces
    "3c 4c 5c 6c 7c 8c 9c",  # natural seven-card straight flush
    "8h 9h Th Jh Qh Kh Ah",  # natural seven-card straight flush, ace high
    "3s 4s 5s 6s 7s 8s Jk",  # seven-card straight flush with the joker
    "Ts Js Qs Ks As Kh Qh",  # royal flush + royal match
    "Td Jd Qd Kd Ad Kc Qc",  # royal flush + royal match
    "9c 9d 9h 9s 2c 5d Jh",  # four of a kind
)


CODES = tuple(card.code for card in DECK)
ACCOUNTS = ("meter", "reserve", "overflow")
BONUS_LIMITS = (
    {"bonus": SpotLimits(100, 10_000)},
    {"bonus": SpotLimits(500, 2_500)},
    {"bonus": SpotLimits(1, 1)},
)


BONUS_AMOUNTS = (None, 1, 100, 499, 500, 2_500, 2_501, 10_000, 10_001, 10**12)


@dataclass
class Books:
    """A pool's money, tallied from the events and effects alone."""

    contributions: Fraction = Fraction(0)
    house: int = 0
    adjustments: int = 0
    paid: int = 0

    def money_in(self) -> Fraction:
        """Contributions, house funding and adjustments."""
        return self.contributions + self.house + self.adjustments


@dataclass
class Harness:
    """Applies events one at a time and checks every property after each."""

    state: LedgerState = field(default_factory=LedgerState)
    events: list[AnyEvent] = field(default_factory=list)
    outcomes: list[bytes | None] = field(default_factory=list)
    books: dict[str, Books] = field(default_factory=dict)
    counter: int = 0
    hits: int = 0
    voids: int = 0
    shortfalls: int = 0
    """Refunds that found an account short (a hit, reseed or reset came between lock and void)."""
    shares: dict[tuple[str, str, int], Contributed] = field(default_factory=dict)
    """The contribution of each progressive wager locked and not yet settled or voided."""
    open_rounds: list[tuple[str, str]] = field(default_factory=list)
    """Rounds locked and left open, to be voided after other events."""

    def next_id(self, prefix: str = "e") -> str:
        """A fresh event or round id."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    def submit(self, event: AnyEvent, *, valid: bool | None = None) -> bool:
        """Apply one event; ``valid`` says whether it must be accepted (None: either)."""
        before = self.state
        snapshot = _snapshot(before)
        self.events.append(event)
        refusal: LedgerError | None = None
        try:
            after, effects = apply(before, event)
        except LedgerError as error:
            refusal = error
        if refusal is not None:
            assert valid is not True, f"{event!r} was refused: {refusal}"
            assert _snapshot(before) == snapshot, "a refused event changed the state"
            self.outcomes.append(None)
            return False
        assert valid is not False, f"{event!r} was accepted"
        self.outcomes.append(encode_effects(effects))
        self._tally(before, event, after, effects)
        self._check(before, event, after, effects)
        self.state = after
        return True

    def _tally(
        self,
        before: LedgerState,
        event: AnyEvent,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        match event:
            case PoolOpened():
                self.books[event.pool_id] = Books(house=event.seed_cents)
            case WagerLocked() if event.spot == "progressive":
                pool_id = before.tables[event.table_id].pool_id
                assert pool_id is not None
                terms = before.pools[pool_id].terms
                rate = terms.rate_of_progression + terms.reserve_rate
                expected = event.amount_cents * rate
                (contributed,) = [e for e in effects if isinstance(e, Contributed)]
                moved = sum(
                    map(
                        parse_fraction,
                        (contributed.to_meter, contributed.to_reserve, contributed.to_overflow),
                    ),
                    Fraction(0),
                )
                assert moved == expected
                assert parse_fraction(contributed.to_reserve) == (
                    event.amount_cents * terms.reserve_rate
                )
                self.books[pool_id].contributions += expected
                self.shares[event.table_id, event.round_id, event.seat] = contributed
            case RoundSettled():
                self._tally_round(before, event, after, effects)
                for key in [
                    key for key in self.shares if key[:2] == (event.table_id, event.round_id)
                ]:
                    del self.shares[key]
            case RoundVoided():
                self._tally_void(before, event, after, effects)
            case MeterAdjusted():
                self.books[event.pool_id].adjustments += event.amount_cents
            case PoolTermsChanged() if event.apply_now:
                pool = before.pools[event.pool_id]
                shortfall = max(0, event.seed_cents - pool.meter_cents)
                from_reserve = min(shortfall, pool.reserve_cents)
                (changed,) = [e for e in effects if isinstance(e, TermsChanged)]
                assert changed.applied
                assert changed.reseed_cents == shortfall
                self.books[event.pool_id].house += shortfall - from_reserve
            case _:
                pass

    def _tally_void(
        self,
        before: LedgerState,
        event: RoundVoided,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        """(f): what each wager contributed at lock comes back off the pool, exactly."""
        self.voids += 1
        refunds = {e.seat: e for e in effects if isinstance(e, ContributionRefunded)}
        locked = {
            key[2]: self.shares.pop(key)
            for key in list(self.shares)
            if key[:2] == (event.table_id, event.round_id)
        }
        if not event.refund_contributions:  # a void's first meaning: contributions stay
            assert not refunds
            return
        assert refunds.keys() == locked.keys()
        pool_id = before.tables[event.table_id].pool_id
        if pool_id is None or not refunds:
            return
        for seat, refund in refunds.items():
            share = locked[seat]
            parts = (share.to_meter, share.to_reserve, share.to_overflow)
            assert (refund.to_meter, refund.to_reserve, refund.to_overflow) == parts
            taken = (refund.from_meter, refund.from_reserve, refund.from_overflow)
            total = sum(map(parse_fraction, parts), Fraction(0))
            assert sum(map(parse_fraction, taken), Fraction(0)) == total
            assert refund.reseed_cents == (
                refund.reseed_from_reserve_cents + refund.reseed_from_house_cents
            )
            if taken != parts or refund.reseed_cents:
                self.shortfalls += 1
            books = self.books[pool_id]
            books.contributions -= total
            books.house += refund.reseed_from_house_cents
        old, new = before.pools[pool_id], after.pools[pool_id]
        assert new.wagers_count == old.wagers_count - len(refunds)
        assert new.wagers_cents == old.wagers_cents - sum(r.wager_cents for r in refunds.values())

    def _tally_round(
        self,
        before: LedgerState,
        event: RoundSettled,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        pool_id = before.tables[event.table_id].pool_id
        payments = [e for e in effects if isinstance(e, MeterPaid)]
        payouts = [e for e in effects if isinstance(e, PayoutMade)]
        from_meter = sum(p.from_meter_cents for p in payouts)
        # (e) every cent that left a meter reached a payout, and the other way round.
        assert from_meter == sum(p.paid_cents for p in payments)
        for payout in payouts:
            if payout.from_meter_cents:
                assert payout.kind == "progressive"
                assert payout.pool_id == pool_id
            if payout.status == "pending":
                assert payout.payout_id in after.pending
        for payment in payments:
            assert payment.pool_id == pool_id
            assert payment.reseed_cents == payment.from_reserve_cents + payment.from_house_cents
            assert payment.from_house_cents >= 0
            assert payment.from_reserve_cents >= 0
        if pool_id is not None:
            books = self.books[pool_id]
            books.paid += from_meter
            books.house += sum(p.from_house_cents for p in payments)
        self.hits += len(payments)

    def _check(
        self,
        before: LedgerState,
        event: AnyEvent,
        after: LedgerState,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        assert set(after.pools) == set(self.books)
        for pool_id, pool in after.pools.items():
            books = self.books[pool_id]
            # (a) money in == meter + reserve + overflow + paid, from our own tally.
            assert books.money_in() == pool.meter + pool.reserve + pool.overflow + books.paid
            assert pool.money_in() == pool.money_held_or_paid()
            assert pool.contributions == books.contributions
            assert pool.house_funding_cents == books.house
            assert pool.adjustments_cents == books.adjustments
            # (e) the payouts' from-meter amounts are the pool's paid total.
            assert pool.paid_cents == books.paid
            # (b) the meter shows at least its seed, and never more than its limit.
            assert pool.meter_cents >= pool.terms.seed_cents
            if pool.terms.limit_cents is not None:
                assert pool.meter_cents <= pool.terms.limit_cents
            assert pool.reserve >= 0
            assert pool.overflow >= 0
            # (c) a meter only goes down for a recorded win, an adjustment or a reset of terms.
            old = before.pools.get(pool_id)
            if old is not None and pool.meter < old.meter:
                assert _recorded_decrease(pool_id, effects), (event, old.meter, pool.meter)
            if old is not None and pool.reserve < old.reserve:
                assert _recorded_decrease(pool_id, effects), (event, old.reserve, pool.reserve)
            if old is not None and pool.overflow < old.overflow:
                assert _recorded_decrease(pool_id, effects), (event, old.overflow, pool.overflow)
        # The journaled balances are the pool's balances.
        for effect in effects:
            if isinstance(effect, Balances):
                pool = after.pools[effect.pool_id]
                assert parse_fraction(effect.meter) == pool.meter
                assert parse_fraction(effect.reserve) == pool.reserve
                assert parse_fraction(effect.overflow) == pool.overflow
                assert effect.paid_cents == pool.paid_cents


def _recorded_decrease(pool_id: str, effects: tuple[AnyEffect, ...]) -> bool:
    for effect in effects:
        if isinstance(effect, MeterPaid | Adjusted) and effect.pool_id == pool_id:
            return True
        if isinstance(effect, TermsChanged) and effect.pool_id == pool_id and effect.applied:
            return True
        if isinstance(effect, ContributionRefunded) and effect.pool_id == pool_id:
            return True
    return False


def _snapshot(state: LedgerState) -> tuple[object, ...]:
    """Copies of every mapping of the state: a refused event must leave all of them as they are."""
    return (
        dict(state.pools),
        dict(state.tables),
        dict(state.table_events),
        dict(state.rounds),
        dict(state.pending),
        state.revision,
    )


def open_pools(data: st.DataObject, harness: Harness) -> list[str]:
    pool_ids = []
    for number in range(data.draw(st.integers(1, 2), label="pools")):
        seed = data.draw(st.sampled_from([0, 100, 500_000, 1_000_000]) | st.integers(0, 2_000_000))
        extra = st.integers(0, 3_000) | st.integers(0, 200_000)  # small: the limit is reached
        limit = data.draw(
            st.none() | extra.map(functools.partial(operator.add, seed)), label="limit"
        )
        event = PoolOpened(
            event_id=harness.next_id(),
            at=AT,
            pool_id=f"P{number}",
            paytable=data.draw(st.sampled_from(PROGRESSIVES)),
            seed_cents=seed,
            rate_of_progression=Decimal(data.draw(st.sampled_from(RATES), label="rate")),
            reserve_rate=Decimal(data.draw(st.sampled_from(RESERVE_RATES), label="reserve")),
            limit_cents=limit,
        )
        harness.submit(event, valid=True)
        pool_ids.append(event.pool_id)
    return pool_ids


def configure_tables(data: st.DataObject, harness: Harness, pool_ids: list[str]) -> list[str]:
    table_ids = []
    for number in range(data.draw(st.integers(1, 2), label="tables")):
        pool_id = data.draw(st.sampled_from(pool_ids))
        progressive = harness.state.pools[pool_id].terms.paytable  # the pool's own paytable
        limits: list[dict[str, SpotLimits] | msgspec.UnsetType] = [msgspec.UNSET, *BONUS_LIMITS]
        event = TableConfigured(
            event_id=harness.next_id(),
            at=AT,
            table_id=f"T{number}",
            paytables={progressive: PAYTABLES[progressive], BONUS: PAYTABLES[BONUS]},
            seats=data.draw(st.integers(1, 6), label="seats"),
            bonus=BONUS,
            progressive=progressive,
            pool_id=pool_id,
            envy_includes_dealer=data.draw(st.booleans()),
            max_payout_cents=data.draw(st.sampled_from([None, 5_000_000])),
            verification_cents=data.draw(st.sampled_from([None, 100_000, 1_000_000])),
            hit_order=data.draw(st.sampled_from(["sequential", "split"])),
            wager_limits=data.draw(st.sampled_from(limits), label="bonus limits"),
        )
        harness.submit(event, valid=True)
        table_ids.append(event.table_id)
    return table_ids


def deal(data: st.DataObject, positions: int) -> list[list[str]]:
    """Seven distinct cards for each position, some of them big hands when they fit."""
    used: set[str] = set()
    hands: list[list[str] | None] = []
    for _ in range(positions):
        big = data.draw(st.none() | st.sampled_from(BIG_HANDS), label="big hand")
        cards = big.split() if big is not None else None
        if cards is not None and used.isdisjoint(cards):
            used.update(cards)
            hands.append(cards)
        else:
            hands.append(None)
    rest = data.draw(st.permutations([code for code in CODES if code not in used]), label="deck")
    dealt = []
    for chosen in hands:
        cards = chosen
        if cards is None:
            cards, rest = rest[:7], rest[7:]
        dealt.append(list(data.draw(st.permutations(cards), label="order")))
    return dealt


def play_round(data: st.DataObject, harness: Harness, table_id: str) -> None:
    rules = harness.state.tables[table_id]
    assert rules.progressive is not None
    assert rules.progressive.progressive is not None
    round_id = harness.next_id("r")
    before_round = dict(harness.state.pools)
    seats = data.draw(
        st.lists(st.integers(1, rules.seats), min_size=1, max_size=rules.seats, unique=True),
        label="occupied seats",
    )
    wagered: set[int] = set()
    for seat in seats:
        if data.draw(st.booleans(), label="progressive wager"):
            amount = rules.progressive.progressive.wager_cents
            wrong = data.draw(st.sampled_from([None, None, None, amount - 1, amount * 5]))
            lock = WagerLocked(
                event_id=harness.next_id(),
                at=AT,
                table_id=table_id,
                round_id=round_id,
                seat=seat,
                spot="progressive",
                amount_cents=amount,
            )
            if wrong is not None:  # a wager outside the paytable's denomination is refused
                harness.submit(_with(lock, harness, amount_cents=wrong), valid=False)
            harness.submit(lock, valid=True)
            wagered.add(seat)
            if data.draw(st.integers(0, 9)) == 0:  # the same spot twice is refused
                harness.submit(_with(lock, harness), valid=False)
        bonus = data.draw(st.sampled_from(BONUS_AMOUNTS), label="bonus")
        if bonus is not None:
            lock = WagerLocked(
                event_id=harness.next_id(),
                at=AT,
                table_id=table_id,
                round_id=round_id,
                seat=seat,
                spot="bonus",
                amount_cents=bonus,
            )
            limits = rules.wager_limits
            inside = limits is None or (
                limits[Spot.BONUS].minimum_cents <= bonus <= limits[Spot.BONUS].maximum_cents
            )
            if harness.submit(lock, valid=inside):
                wagered.add(seat)
    ending = data.draw(
        st.sampled_from(["settle"] * 3 + ["void", "later", "later"]), label="round ends"
    )
    if ending == "later":  # voided after other events (steps "void")
        harness.open_rounds.append((table_id, round_id))
        return
    if ending == "void":
        void_round(data, harness, table_id, round_id, pools_before=before_round)
        return
    dealer, *hands = deal(data, len(seats) + 1)
    settled = RoundSettled(
        event_id=harness.next_id(),
        at=AT,
        table_id=table_id,
        round_id=round_id,
        dealer=dealer,
        hands={str(seat): cards for seat, cards in zip(seats, hands, strict=True)},
    )
    mistake = data.draw(st.sampled_from([None, None, None, "duplicate", "missing"]))
    if mistake == "duplicate":  # a card in two hands: refused, nothing moves
        first = str(seats[0])
        bad_hand = [dealer[0], *settled.hands[first][1:]]
        harness.submit(
            _with(settled, harness, hands={**settled.hands, first: bad_hand}), valid=False
        )
    elif mistake == "missing" and wagered:  # a wager without a hand: refused
        missing = str(min(wagered))
        hands_left = {seat: cards for seat, cards in settled.hands.items() if seat != missing}
        harness.submit(_with(settled, harness, hands=hands_left), valid=False)
    harness.submit(settled, valid=True)


def void_round(
    data: st.DataObject,
    harness: Harness,
    table_id: str,
    round_id: str,
    pools_before: dict[str, Pool] | None = None,
) -> None:
    """Void a round, by default reversing its contributions (every producer asks for that)."""
    refund = data.draw(st.sampled_from([True, True, True, False]), label="refund contributions")
    event = RoundVoided(
        event_id=harness.next_id(), at=AT, table_id=table_id, round_id=round_id,
        by="supervisor 7", reason="misdeal", refund_contributions=refund,
    )  # fmt: skip
    if (table_id, round_id) not in harness.state.rounds:  # no wager locked: nothing to void
        harness.submit(event, valid=False)
        return
    harness.submit(event, valid=True)
    if pools_before is not None and refund:
        # (f) voided right after lock: every pool exactly as before the round, counters too.
        assert dict(harness.state.pools) == pools_before
    # The same void again: the round is over.
    harness.submit(_with(event, harness), valid=False)


def void_later(data: st.DataObject, harness: Harness) -> None:
    if not harness.open_rounds:
        return
    index = data.draw(st.integers(0, len(harness.open_rounds) - 1), label="open round")
    table_id, round_id = harness.open_rounds.pop(index)
    pool_id = harness.state.tables[table_id].pool_id
    move = data.draw(st.sampled_from([None, "hit", "seed", "reserve"]), label="move the pool")
    if pool_id is not None and move is not None:
        # Between lock and void, the pool moves so that an account no longer holds what the
        # round's wagers put in: a new seed above the meter, applied now, or the reserve spent.
        pool = harness.state.pools[pool_id]
        if move == "hit":
            jackpot(harness, table_id)
        elif move == "seed":
            terms = PoolTermsChanged(
                event_id=harness.next_id(), at=AT, pool_id=pool_id, paytable=pool.terms.paytable,
                seed_cents=pool.meter_cents + 1, rate_of_progression=Decimal("0.28"),
                apply_now=True, by="supervisor 7", reason="new seed",
            )  # fmt: skip
            harness.submit(terms, valid=True)
        elif pool.reserve_cents > 0:
            spend = MeterAdjusted(
                event_id=harness.next_id(), at=AT, pool_id=pool_id, account="reserve",
                amount_cents=-pool.reserve_cents, by="supervisor 7", reason="reserve spent",
            )  # fmt: skip
            harness.submit(spend, valid=True)
    void_round(data, harness, table_id, round_id)


def jackpot(harness: Harness, table_id: str) -> None:
    """A round on ``table_id`` whose seat 1 holds a natural seven-card straight flush: 100 %."""
    rules = harness.state.tables[table_id]
    assert rules.progressive is not None
    assert rules.progressive.progressive is not None
    round_id = harness.next_id("r")
    lock = WagerLocked(
        event_id=harness.next_id(), at=AT, table_id=table_id, round_id=round_id, seat=1,
        spot="progressive", amount_cents=rules.progressive.progressive.wager_cents,
    )  # fmt: skip
    harness.submit(lock, valid=True)
    settled = RoundSettled(
        event_id=harness.next_id(), at=AT, table_id=table_id, round_id=round_id,
        dealer=["2c", "4h", "6s", "8c", "Tc", "Qh", "Ks"],
        hands={"1": ["3d", "4d", "5d", "6d", "7d", "8d", "9d"]},
    )  # fmt: skip
    harness.submit(settled, valid=True)


def _with(event: AnyEvent, harness: Harness, **changes: object) -> AnyEvent:
    """The same event under a new id, with some fields changed."""
    fields = {name: getattr(event, name) for name in event.__struct_fields__}
    fields.update(changes, event_id=harness.next_id())
    return type(event)(**fields)


def adjust(data: st.DataObject, harness: Harness, pool_id: str) -> None:
    pool = harness.state.pools[pool_id]
    account = data.draw(st.sampled_from([*ACCOUNTS, "meter", "jackpot"]), label="account")
    balance = getattr(pool, account, Fraction(0))
    seed = pool.terms.seed_cents
    limit = pool.terms.limit_cents
    boundaries = [0, -int(balance), -int(balance) - 1, seed - pool.meter_cents]
    boundaries += [seed - pool.meter_cents - 1]
    if limit is not None:
        boundaries += [limit - pool.meter_cents, limit - pool.meter_cents + 1]
    cents = data.draw(
        st.sampled_from(boundaries) | st.integers(-500_000, 500_000), label="adjustment"
    )
    reason = data.draw(st.sampled_from(["count correction", "", "  "]), label="reason")
    event = MeterAdjusted(
        event_id=harness.next_id(),
        at=AT,
        pool_id=pool_id,
        account=account,
        amount_cents=cents,
        by="supervisor 7",
        reason=reason,
    )
    harness.submit(event, valid=_adjustment_allowed(pool, account, cents, reason))


def _adjustment_allowed(pool: Pool, account: str, cents: int, reason: str) -> bool:
    """A documented correction, never to below $0, below the seed or above the limit.

    docs/money.md, "Corrections".
    """
    if not reason.strip() or cents == 0 or account not in ACCOUNTS:
        return False
    balance = getattr(pool, account) + cents
    if balance < 0:
        return False
    if account != "meter":
        return True
    limit = pool.terms.limit_cents
    return balance >= pool.terms.seed_cents and (cents < 0 or limit is None or balance <= limit)


def change_terms(data: st.DataObject, harness: Harness, pool_id: str) -> None:
    pool = harness.state.pools[pool_id]
    seed = data.draw(
        st.sampled_from([pool.terms.seed_cents, pool.meter_cents, pool.meter_cents + 1, 0])
        | st.integers(0, 2_000_000),
        label="new seed",
    )
    rate = data.draw(st.sampled_from([*RATES, "0.99"]), label="new rate")
    reserve = data.draw(st.sampled_from(RESERVE_RATES), label="new reserve")
    limit = data.draw(
        st.sampled_from([None, None, pool.meter_cents, pool.meter_cents - 1, seed, seed - 1])
        | st.integers(0, 3_000).map(lambda extra: max(seed, pool.meter_cents) + extra)
        | st.integers(0, 3_000_000),
        label="new limit",
    )
    now = data.draw(st.booleans(), label="apply now")
    event = PoolTermsChanged(
        event_id=harness.next_id(),
        at=AT,
        pool_id=pool_id,
        paytable=pool.terms.paytable,
        seed_cents=seed,
        rate_of_progression=Decimal(rate),
        reserve_rate=Decimal(reserve),
        limit_cents=limit,
        apply_now=now,
        by="supervisor 7",
        reason=data.draw(st.sampled_from(["new paytable"] * 3 + [""]), label="reason"),
    )
    valid = (
        bool(event.reason)
        and Fraction(rate) + Fraction(reserve) <= 1
        and (limit is None or limit >= max(seed, pool.meter_cents))
    )
    before = pool
    if harness.submit(event, valid=valid):
        after = harness.state.pools[pool_id]
        if now:
            assert after.terms.seed_cents == seed
            assert after.terms.limit_cents == limit
            assert after.pending_terms is None
        else:
            # docs/money.md, "Changes of terms": the change waits until the jackpot is won.
            assert after.terms == before.terms
            assert after.pending_terms is not None
            assert after.pending_terms.seed_cents == seed
            assert after.meter == before.meter


def verify(data: st.DataObject, harness: Harness) -> None:
    pending = sorted(harness.state.pending)
    if len(pending) > 0 and data.draw(st.booleans()):
        payout_id = data.draw(st.sampled_from(pending))
        harness.submit(
            HitVerified(event_id=harness.next_id(), at=AT, payout_id=payout_id, by="supervisor 7"),
            valid=True,
        )
        assert payout_id not in harness.state.pending
    else:
        harness.submit(
            HitVerified(event_id=harness.next_id(), at=AT, payout_id="nope", by="supervisor 7"),
            valid=False,
        )


def nonsense(data: st.DataObject, harness: Harness) -> None:
    """Events the ledger must refuse, and a fault that changes nothing."""
    kind = data.draw(st.sampled_from(["table", "pool", "seat", "fault"]), label="nonsense")
    if kind == "table":
        event: AnyEvent = WagerLocked(
            event_id=harness.next_id(),
            at=AT,
            table_id="T9",
            round_id="r",
            seat=1,
            spot="bonus",
            amount_cents=500,
        )
    elif kind == "pool":
        event = MeterAdjusted(
            event_id=harness.next_id(),
            at=AT,
            pool_id="P9",
            account="meter",
            amount_cents=100,
            by="supervisor 7",
            reason="count correction",
        )
    elif kind == "seat":
        table_id = min(harness.state.tables)
        event = WagerLocked(
            event_id=harness.next_id(),
            at=AT,
            table_id=table_id,
            round_id="r",
            seat=harness.state.tables[table_id].seats + 1,
            spot="bonus",
            amount_cents=500,
        )
    else:
        before = harness.state
        harness.submit(
            FaultRecorded(event_id=harness.next_id(), at=AT, source="shoe", reason="garbage"),
            valid=True,
        )
        assert harness.state == before
        return
    harness.submit(event, valid=False)


def play(data: st.DataObject) -> Harness:
    harness = Harness()
    pool_ids = open_pools(data, harness)
    table_ids = configure_tables(data, harness, pool_ids)
    steps = data.draw(st.integers(3, 25), label="steps")
    for _ in range(steps):
        step = data.draw(
            st.sampled_from(
                ["round"] * 6 + ["adjust", "terms", "terms", "verify", "nonsense", "void", "void"]
            ),
            label="step",
        )
        if step == "round":
            play_round(data, harness, data.draw(st.sampled_from(table_ids)))
        elif step == "adjust":
            adjust(data, harness, data.draw(st.sampled_from(pool_ids)))
        elif step == "terms":
            change_terms(data, harness, data.draw(st.sampled_from(pool_ids)))
        elif step == "verify":
            verify(data, harness)
        elif step == "void":
            void_later(data, harness)
        else:
            nonsense(data, harness)
    return harness
