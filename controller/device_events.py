"""The events a table's devices send: bets sensed and locked, cards dealt, a deal complete.

Each is identified by ``table/device/seq`` (:func:`device_event_id`) and ends with the
signature of the table agent that forwarded it, if any. They join the union of every event
in :mod:`controller.events`, which names them too, so that they are imported from either.
"""

from __future__ import annotations

import msgspec

from controller.agent_events import AgentSigned
from controller.event_base import Event


class DeviceEvent(Event, frozen=True):
    """An input from a table device, identified by ``table/device/seq``.

    Devices resend until acknowledged and the journal applies an id once, so a resend is
    harmless (see :func:`device_event_id`). Devices must not reuse a sequence number.

    Each kind ends with ``agent_signature``: the signature of the table's enrolled agent that
    forwarded it (controller/agent_events.py), ``UNSET`` (never encoded, nor in the stored
    array form) on events without one, so that every earlier row reads and hashes as written.
    """

    table_id: str
    device: str
    seq: int


class BetSensed(DeviceEvent, frozen=True, tag="bet-sensed"):
    """A bet sensor saw a chip arrive on (or leave) a side-bet spot."""

    seat: int
    spot: str
    present: bool
    amount_cents: int = 0
    agent_signature: AgentSigned = msgspec.UNSET


class BetsLocked(DeviceEvent, frozen=True, tag="bets-locked"):
    """The dealer locked bets ("no more bets") and a round began: present bets become wagers."""

    round_id: str
    agent_signature: AgentSigned = msgspec.UNSET


class CardDealt(DeviceEvent, frozen=True, tag="card-dealt"):
    """The shoe dealt a card to a position: 0 is the dealer, 1 and up the seats."""

    round_id: str
    position: int
    card: str
    agent_signature: AgentSigned = msgspec.UNSET


class DealComplete(DeviceEvent, frozen=True, tag="deal-complete"):
    """Every hand of the round is dealt: the round can be settled."""

    round_id: str
    agent_signature: AgentSigned = msgspec.UNSET


DeviceInput = BetSensed | BetsLocked | CardDealt | DealComplete
"""The events a table's devices send."""


def device_event_id(table_id: str, device: str, seq: int) -> str:
    """The journal id of a device's input: resends of one frame or message share it."""
    return f"{table_id}/{device}/{seq}"
