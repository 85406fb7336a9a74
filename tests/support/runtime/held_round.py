"""A round held for a supervisor, made by a table's devices on a real pty serial line.

:class:`TableDevices` is table T1's devices at the far end of the line the daemon reads
(:class:`~drivers.simulator_links.serial.PtyPair`, :class:`SerialTableLink`, the reference
serial protocol): a bet sensor, the dealer's "no more bets" and the card shoe, heartbeating
meanwhile so that the table stays open however long a test's browser takes. Each event's frame
is written until the daemon ACKs it, as the reference device does.

:meth:`TableDevices.hold` is what docs/faults.md and controller/ledger/table_state.py say holds
a round: after $1 bets (progressive-1's one wager) on two seats' progressive spots are locked,
the shoe's first card is sent, its frame sent again (a resend: the journal applies an event id
once, so it changes nothing), then the same card again under a new number: a duplicate card in
the round, which cannot be right. The ledger holds the round for a supervisor, with the
wagers' contributions in the pool. :meth:`TableDevices.play` plays a whole round to its
settlement (hands that win nothing), to show the table plays on.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete, device_event_id
from controller.ledger.table_state import Phase
from drivers.simulator_links import SerialTableLink, serial_payload
from support.runtime.floor import WAGER_CENTS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from controller.events import DeviceInput
    from drivers.simulator_links import PtyPair
    from support.runtime.daemon import Daemon

TABLE: Final = "T1"
DEVICE: Final = "pit-1"
AT: Final = "2026-12-01T20:00:00Z"
"""The devices' own time: the daemon stamps each frame with its clock as it reads it."""
SEATS: Final = (1, 2)
DUPLICATE: Final = "As"
"""The card the shoe sends twice."""
HEARTBEAT_S: Final = 0.5
DEALER: Final = ["3c", "4d", "6s", "8d", "Tc", "Qc", "7s"]
NOTHING: Final = {
    1: ["2c", "5d", "9h", "Jc", "3s", "7d", "Kh"],
    2: ["2d", "6c", "9s", "Qd", "4h", "8c", "Ks"],
}
"""Hands that win nothing on progressive-1 against :data:`DEALER` (no card in two hands)."""


@dataclass
class TableDevices:
    """T1's devices on the line (see the module docstring); ``seq`` numbers their events."""

    link: SerialTableLink
    running: Daemon
    seq: int = 0
    sent: list[DeviceInput] = field(default_factory=list)

    def _next(self) -> tuple[str, int]:
        self.seq += 1
        return device_event_id(TABLE, DEVICE, self.seq), self.seq

    async def send(self, event: DeviceInput) -> None:
        """Write the event's frame until the daemon ACKs it (it is then journaled)."""
        await self.link.send(event)
        self.sent.append(event)

    async def resend(self, event: DeviceInput) -> str | None:
        """The same frame once more, as a device whose ACK was lost resends it: the answer."""
        return await self.link.exchange(serial_payload(event))

    async def bet(self, seat: int, amount_cents: int = WAGER_CENTS) -> None:
        """A chip on ``seat``'s progressive spot."""
        event_id, seq = self._next()
        event = BetSensed(event_id, AT, TABLE, DEVICE, seq, seat, "progressive", True, amount_cents)
        await self.send(event)

    async def lock(self, round_id: str) -> None:
        """No more bets: the round begins."""
        event_id, seq = self._next()
        await self.send(BetsLocked(event_id, AT, TABLE, DEVICE, seq, round_id))

    def card(self, round_id: str, position: int, code: str) -> CardDealt:
        """A card from the shoe (not yet sent)."""
        event_id, seq = self._next()
        return CardDealt(event_id, AT, TABLE, DEVICE, seq, round_id, position, code)

    async def done(self, round_id: str) -> None:
        """Every hand is dealt."""
        event_id, seq = self._next()
        await self.send(DealComplete(event_id, AT, TABLE, DEVICE, seq, round_id))

    async def void(self, round_id: str, reason: str = "misdeal") -> str | None:
        """The dealer's console voids the round (``VOID``): the daemon's answer."""
        _, seq = self._next()
        return await self.link.exchange(f"VOID,{DEVICE},{seq},{round_id},{reason}")

    async def betting(self, round_id: str) -> None:
        """Bets on every seat of :data:`SEATS`, then locked."""
        for seat in SEATS:
            await self.bet(seat)
        await self.lock(round_id)

    async def hold(self, round_id: str) -> str:
        """Lock bets, then the shoe's first card, its resend, and the same card again.

        The round is held (waited for, bounded); the reason the ledger gave.
        """
        await self.betting(round_id)
        first = self.card(round_id, 0, DUPLICATE)
        await self.send(first)
        answer = await self.resend(first)
        assert answer == f"ACK,{DEVICE},{first.seq}", answer
        await self.send(self.card(round_id, 1, DUPLICATE))
        await self.running.until(lambda: self.phase() is Phase.HELD, f"round {round_id} held")
        return self.running.runtime.journal.state.table_states[TABLE].held_reason

    async def play(self, round_id: str) -> None:
        """A whole round, dealt and settled (waited for)."""
        await self.betting(round_id)
        for position, hand in [(0, DEALER), *NOTHING.items()]:
            for code in hand:
                await self.send(self.card(round_id, position, code))
        await self.done(round_id)
        await self.running.until(
            lambda: (TABLE, round_id) not in self.running.runtime.journal.state.rounds,
            f"round {round_id} settled",
        )

    def phase(self) -> Phase | None:
        """T1's phase in the journal's state."""
        live = self.running.runtime.journal.state.table_states.get(TABLE)
        return None if live is None else live.phase

    async def heartbeats(self) -> None:
        """Heartbeat every :data:`HEARTBEAT_S` with the last event's number, until cancelled."""
        while True:
            await self.link.heartbeat(TABLE, DEVICE, self.seq or None)
            await asyncio.sleep(HEARTBEAT_S)


@contextlib.asynccontextmanager
async def table_devices(line: PtyPair, running: Daemon) -> AsyncIterator[TableDevices]:
    """T1's devices on ``line`` (its master end) while the block runs, heartbeating."""
    reader, writer = await line.open()
    async with SerialTableLink(TABLE, reader, writer) as link:
        devices = TableDevices(link, running)
        beats = asyncio.create_task(devices.heartbeats())
        try:
            yield devices
        finally:
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beats
