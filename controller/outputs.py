"""What the controller tells the world once a change is durable: meters, hits, table states.

The sequencer publishes these only after the journal transaction behind them has committed
(docs/architecture.md). Sinks (signs, MQTT meter topics, the web display, metrics) receive them
through :class:`controller.runtime.broadcast.Broadcast`. Money is integer cents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from controller.events import CheckpointRecorded  # noqa: TC001 - msgspec resolves it

if TYPE_CHECKING:
    from controller.effects import PayoutMade, WagerRefused


class Update(msgspec.Struct, frozen=True, tag_field="type"):
    """Fields every update has: when, and the journal row it follows from (0 if none)."""

    at: str
    seq: int


class MeterUpdate(Update, frozen=True, tag="meter"):
    """A pool's meters as they now stand."""

    pool_id: str
    meter_cents: int
    reserve_cents: int
    overflow_cents: int
    seed_cents: int


class HitAnnouncement(Update, frozen=True, tag="hit"):
    """A progressive hit (or any payout needing verification) to show on signs and displays."""

    payout_id: str
    pool_id: str | None
    table_id: str
    seat: int
    line: str | None
    amount_cents: int
    pending: bool
    tax_report: bool
    hand: str = ""


class TableUpdate(Update, frozen=True, tag="table"):
    """A table opened or closed (its sign shows CLOSED and its wagers are refused)."""

    table_id: str
    online: bool
    reason: str


class WagerRefusal(Update, frozen=True, tag="wager-refused"):
    """A chip that did not become a wager when bets were locked, and why (it is returned).

    Shown to its table (docs/rules.md § 8): a chip outside its spot's limits, a progressive
    chip of another denomination, a spot the table does not offer.
    """

    table_id: str
    round_id: str
    seat: int
    spot: str
    amount_cents: int
    reason: str


class ControllerUpdate(Update, frozen=True, tag="controller"):
    """The controller as a whole went online, or offline (failing closed)."""

    online: bool
    reason: str


class CheckpointUpdate(Update, frozen=True, tag="checkpoint"):
    """A signed checkpoint journaled at row ``seq``, published off the box.

    Published where the journal's writer cannot rewrite it (docs/journal.md, "Checkpoints and
    anchors"): the retained MQTT topic, the metrics and the log.
    """

    checkpoint: CheckpointRecorded


AnyUpdate = (
    MeterUpdate | HitAnnouncement | TableUpdate | WagerRefusal | ControllerUpdate | CheckpointUpdate
)


def hit_announcement(payout: PayoutMade, at: str, seq: int) -> HitAnnouncement | None:
    """The announcement of a payout journaled at row ``seq``, if it is one to announce.

    A meter hit is, and so is any payout big enough to wait for a supervisor; an ordinary
    bonus pay is not.
    """
    pending = payout.status == "pending"
    if payout.from_meter_cents <= 0 and not pending:
        return None
    return HitAnnouncement(
        at,
        seq,
        payout.payout_id,
        payout.pool_id,
        payout.table_id,
        payout.seat,
        payout.line,
        payout.win_cents,
        pending,
        payout.tax_report,
        payout.hand,
    )


def wager_refusal(refused: WagerRefused, at: str, seq: int) -> WagerRefusal:
    """The refusal journaled at row ``seq``, for its table's devices and displays."""
    return WagerRefusal(
        at,
        seq,
        refused.table_id,
        refused.round_id,
        refused.seat,
        refused.spot,
        refused.amount_cents,
        refused.reason,
    )
