"""Virtual tables: players bet, the dealer locks, the shoe deals a shuffled 53-card deck.

Each simulated table produces exactly what real devices would: bet-sensor reports, "no more
bets", one card at a time to each position, "deal complete", and heartbeats. A
:class:`DeviceLink` carries them: :class:`InProcessLink` hands them straight to the controller
(the demo), other links speak the real MQTT or serial protocols (integration tests and
benchmarks).

Device names carry a session id chosen at start, so that sequence numbers never repeat across
runs against the same journal. ``hit_every`` deals a rigged jackpot hand (five aces, or a
seven-card straight flush) every N rounds so that a demo shows hits; it is off by default and
never used by a real table.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from controller.backoff import Backoff, retrying
from controller.clock import utc_now
from controller.events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    DeviceInput,
    device_event_id,
)
from controller.ports import ControllerUnavailableError
from controller.rules.cards import DECK, HAND_SIZE, format_cards, parse_cards

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from controller.ports import Intake

JACKPOT_HANDS = ("Ac Ad Ah As Jk 7c 2d", "3c 4c 5c 6c 7c 8c 9c", "9h Th Jh Qh Kh Ah Jk")


class DeviceLink(Protocol):
    """Where a simulated table's device messages go."""

    async def send(self, event: DeviceInput) -> None:
        """Deliver one device event and wait until the controller has it (or gave up)."""
        ...

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Tell the controller the device is alive, and the last event it sent."""
        ...


@dataclass(slots=True)
class InProcessLink:
    """Hands events to the controller's intake directly (the demo's embedded tables).

    Like a real device that resends until acknowledged, it retries an event the controller
    could not take (failing closed) with capped backoff; the journal applies the id once.
    """

    intake: Intake
    backoff: Backoff = field(default_factory=lambda: Backoff(initial=0.1, cap=2.0))

    async def send(self, event: DeviceInput) -> None:
        """Submit and wait for the journal, retrying while the controller is unavailable."""
        await retrying(
            lambda: self.intake.submit(event), self.backoff, retry_on=ControllerUnavailableError
        )

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """Report a heartbeat."""
        self.intake.heartbeat(table_id, device, last)


ODDS_CHIPS: Final[tuple[int, ...]] = (100, 500, 500, 1000, 2500)
"""The chips simulated players put on odds spots, in cents (one draw from these)."""


@dataclass(slots=True)
class TablePlan:
    """What a simulated table offers and how its players bet."""

    table_id: str
    seats: int = 6
    bonus: bool = True
    ace_high: bool = False
    insurance: bool = False
    dynasty: bool = False
    progressive_wager_cents: int | None = 100
    occupancy: float = 0.7
    bonus_amounts: tuple[int, ...] = ODDS_CHIPS
    bet_probability: float = 0.6


@dataclass(slots=True)
class SimulatedTable:
    """One table's devices: a bet sensor, a card shoe and a dealer console."""

    plan: TablePlan
    link: DeviceLink
    rng: random.Random
    session: str
    hit_every: int = 0
    rounds_played: int = 0
    _seq: dict[str, int] = field(default_factory=dict)

    def _next(self, device: str) -> tuple[str, int]:
        name = f"{device}-{self.session}"
        self._seq[name] = self._seq.get(name, 0) + 1
        return name, self._seq[name]

    def _event(self, kind: Callable[..., DeviceInput], device: str, *fields: object) -> DeviceInput:
        name, seq = self._next(device)
        table_id = self.plan.table_id
        return kind(device_event_id(table_id, name, seq), utc_now(), table_id, name, seq, *fields)

    def _bets(self) -> list[tuple[int, str, int]]:
        plan, rng = self.plan, self.rng
        bets = []
        for seat in range(1, plan.seats + 1):
            if rng.random() > plan.occupancy:
                continue
            if plan.bonus and rng.random() < plan.bet_probability:
                bets.append((seat, "bonus", rng.choice(plan.bonus_amounts)))
            if plan.ace_high and rng.random() < plan.bet_probability / 2:
                bets.append((seat, "ace-high", rng.choice(plan.bonus_amounts)))
            if plan.insurance and rng.random() < plan.bet_probability / 2:
                bets.append((seat, "insurance", rng.choice(plan.bonus_amounts)))
            if plan.dynasty and rng.random() < plan.bet_probability:
                bets.append((seat, "dynasty", rng.choice(plan.bonus_amounts)))
            if plan.progressive_wager_cents and rng.random() < plan.bet_probability:
                bets.append((seat, "progressive", plan.progressive_wager_cents))
        return bets

    def _rigged(self) -> bool:
        """Whether this round deals the rigged jackpot hand (every ``hit_every`` rounds)."""
        return bool(self.hit_every) and self.rounds_played % self.hit_every == self.hit_every - 1

    def _deal(self, seats: list[int], progressive: list[int]) -> dict[int, list[str]]:
        """Seven cards for each seat in play and the dealer, from one shuffled deck.

        A rigged hand goes to a seat with a progressive wager when there is one, so that the
        demo's rigged hand is a jackpot (a pay from the meter), not only a bonus pay.
        """
        deck = [card.code for card in DECK]
        self.rng.shuffle(deck)
        hands: dict[int, list[str]] = {}
        if self._rigged() and seats:
            lucky = self.rng.choice(progressive or seats)
            hand = [card.code for card in parse_cards(self.rng.choice(JACKPOT_HANDS))]
            hands[lucky] = hand
            deck = [code for code in deck if code not in hand]
        for position in (*seats, 0):
            if position not in hands:
                hands[position], deck = deck[:HAND_SIZE], deck[HAND_SIZE:]
        return hands

    async def play_round(self) -> str:
        """Bets, lock, deal, done: one whole round. Returns the round id."""
        round_id = f"{self.session}-{self.rounds_played + 1}"
        bets = self._bets()
        cents = self.plan.progressive_wager_cents
        if self._rigged() and cents and not any(spot == "progressive" for _, spot, _ in bets):
            # The rigged hand is for a jackpot: someone at the table plays the progressive.
            seat = self.rng.choice(sorted({seat for seat, _, _ in bets}) or [1])
            bets.append((seat, "progressive", cents))
        for seat, spot, amount in bets:
            await self.link.send(self._event(BetSensed, "sensor", seat, spot, True, amount))  # noqa: FBT003
        await self.link.send(self._event(BetsLocked, "console", round_id))
        seats = sorted({seat for seat, _, _ in bets} | self._bystanders(bets))
        hands = self._deal(seats, sorted({seat for seat, spot, _ in bets if spot == "progressive"}))
        for index in range(HAND_SIZE):  # round-robin, as a shoe deals
            for position in (*seats, 0):
                card = hands[position][index]
                await self.link.send(self._event(CardDealt, "shoe", round_id, position, card))
        await self.link.send(self._event(DealComplete, "shoe", round_id))
        self.rounds_played += 1
        return round_id

    def _bystanders(self, bets: list[tuple[int, str, int]]) -> set[int]:
        """Seats playing only the main game still get hands (their hands count for Envy)."""
        betting = {seat for seat, _, _ in bets}
        return {
            seat
            for seat in range(1, self.plan.seats + 1)
            if seat not in betting and self.rng.random() < self.plan.occupancy / 3
        }

    async def heartbeats(self, interval_s: float) -> None:
        """Heartbeat from each device every ``interval_s`` until cancelled.

        Each says the ``seq`` of the last event it sent, so that a lost one shows as a gap.
        """
        while True:
            await self.heartbeat_once()
            await asyncio.sleep(interval_s)

    async def heartbeat_once(self) -> None:
        """One heartbeat from each device (the console's even before it sent anything)."""
        devices = dict.fromkeys([f"console-{self.session}", *self._seq])
        for device in devices:
            await self.link.heartbeat(self.plan.table_id, device, self._seq.get(device))


def describe_hand(cards: list[str]) -> str:
    """Cards as the shoe dealt them (for logs)."""
    return format_cards(parse_cards(cards))
