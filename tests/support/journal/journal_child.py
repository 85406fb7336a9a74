"""Child process of the crash test: applies a deterministic stream of events to a real journal.

Run as ``python tests/support/journal/journal_child.py DBPATH START COUNT SEED``. It opens the
journal, prints
``ready`` once the journal file exists with its schema, makes sure the two pools and the two
tables exist (fixed event ids, so that a restart re-sends them harmlessly), then appends events
``START`` to
``START + COUNT - 1`` of the stream for ``SEED``. After each ``append`` returns (the event is
committed) it prints ``ack EVENT_ID OUTCOME DUPLICATE`` and flushes: an acknowledgement means
"durable".

The stream is a pure function of the seed and the position (:func:`stream`), so a restarted
child regenerates the same events with the same ids, and the parent can regenerate them to
check what the journal holds. Each round is on one of two tables (one pool each): progressive
wagers (contributions), now and then a wager of the wrong amount (journaled as rejected), and
the round's cards, about one round in six with a forced meter hit (a seven-card straight flush
resets the meter, five aces pay 10 %), which on the table with a verification amount is then
verified by a supervisor.
"""

from __future__ import annotations

import importlib.resources
import itertools
import random
import sys
from decimal import Decimal
from typing import TYPE_CHECKING

from controller.events import HitVerified, PoolOpened, RoundSettled, TableConfigured, WagerLocked
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.events import AnyEvent

AT = "2024-05-01T12:00:00Z"
PAYTABLE = "progressive-1"
WAGER_CENTS = 100
SEED_CENTS = 1_000_000
RANKS = "23456789TJQKA"
SUITS = "shdc"
DECK = (*(rank + suit for rank in RANKS for suit in SUITS), "Jk")
STRAIGHT_FLUSH = ("9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h")
FIVE_ACES = ("As", "Ah", "Ad", "Ac", "Jk", "4d", "7c")

POOLS = {
    # pool id: (table id, rate of progression, reserve rate, limit, verification amount)
    "pool-a": ("T1", Decimal("0.2825"), Decimal("0.02"), None, 50_000),
    "pool-b": ("T2", Decimal("0.28"), Decimal(0), SEED_CENTS + 700, None),
}
RATES = {pool_id: rate + reserve for pool_id, (_, rate, reserve, _, _) in POOLS.items()}
TABLE_POOL = {table_id: pool_id for pool_id, (table_id, *_) in POOLS.items()}


def paytable_text() -> str:
    """The TOML text of the progressive paytable the tables use."""
    return (importlib.resources.files("controller") / "paytables" / f"{PAYTABLE}.toml").read_text()


def setup_events() -> list[AnyEvent]:
    """The pools and the tables, with fixed event ids."""
    events: list[AnyEvent] = []
    text = paytable_text()
    for pool_id, (table_id, rate, reserve, limit, verification) in POOLS.items():
        events.append(
            PoolOpened(f"setup/{pool_id}", AT, pool_id, PAYTABLE, SEED_CENTS, rate, reserve, limit)
        )
        events.append(
            TableConfigured(
                f"setup/{table_id}",
                AT,
                table_id,
                {PAYTABLE: text},
                progressive=PAYTABLE,
                pool_id=pool_id,
                verification_cents=verification,
            )
        )
    return events


def _round(seed: str, number: int) -> list[AnyEvent]:
    rng = random.Random(f"{seed}:{number}")  # noqa: S311 - a reproducible deal, not a secret
    table_id = "T1" if number % 2 == 0 else "T2"
    round_id = f"r{number}"
    prefix = f"{seed}/{round_id}"
    seats = sorted(rng.sample(range(1, 7), rng.randint(1, 4)))
    events: list[AnyEvent] = [
        WagerLocked(f"{prefix}/w{seat}", AT, table_id, round_id, seat, "progressive", WAGER_CENTS)
        for seat in seats
    ]
    if rng.random() < 0.1:  # a wager outside the paytable's denomination: refused, journaled
        events.append(
            WagerLocked(f"{prefix}/bad", AT, table_id, round_id, 7 - seats[0], "progressive", 250)
        )
    forced = rng.choice((STRAIGHT_FLUSH, FIVE_ACES)) if rng.random() < 0.17 else None
    deck = [card for card in DECK if forced is None or card not in forced]
    rng.shuffle(deck)
    dealt = iter(deck)
    dealer = [next(dealt) for _ in range(7)]
    hands = {}
    for seat in seats:
        if forced is not None and seat == seats[0]:
            hands[str(seat)] = list(forced)
        else:
            hands[str(seat)] = [next(dealt) for _ in range(7)]
    settle_id = f"{prefix}/settle"
    events.append(RoundSettled(settle_id, AT, table_id, round_id, dealer, hands))
    if forced is not None and POOLS[TABLE_POOL[table_id]][4] is not None:
        payout_id = f"{settle_id}/{seats[0]}/progressive"
        events.append(HitVerified(f"{prefix}/verify", AT, payout_id, "supervisor-7"))
    return events


def stream(seed: str) -> Iterator[AnyEvent]:
    """The endless, deterministic stream of events for ``seed``."""
    for number in itertools.count():
        yield from _round(seed, number)


def main(argv: list[str]) -> int:
    """Open the journal, set it up, append the slice of the stream, acknowledge each event."""
    path, start, count, seed = argv[1], int(argv[2]), int(argv[3]), argv[4]
    out = sys.stdout
    with Journal(path) as journal:
        # ``ready`` only once the journal is open: the parent starts its kill timer on this
        # line, and a kill before the file and its schema exist would leave nothing to check
        # (the test flaked under load when ``ready`` came before the open).
        out.write("ready\n")
        out.flush()
        events = itertools.islice(stream(seed), start, start + count)
        for event in itertools.chain(setup_events(), events):
            receipt = journal.append(event)
            out.write(f"ack {receipt.event_id} {receipt.outcome} {int(receipt.duplicate)}\n")
            out.flush()
    out.write("done\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
