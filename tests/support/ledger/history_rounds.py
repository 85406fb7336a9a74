"""The rounds of random event histories: wagers locked, hands dealt, rounds settled or voided.

Each round is played through a :class:`support.ledger.history_harness.Harness`, with the mistakes
the ledger must refuse (a wager outside the paytable's denomination or limits, the same spot twice,
a card in two hands, a wager without a hand) and rounds voided at once or after other events.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from controller.events import (
    MeterAdjusted,
    PoolTermsChanged,
    RoundSettled,
    RoundVoided,
    WagerLocked,
)
from controller.rules.spots import Spot
from support.ledger.history_values import AT, BIG_HANDS, BONUS_AMOUNTS, CODES

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ledger.pool import Pool
    from support.ledger.history_harness import Harness


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
