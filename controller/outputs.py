"""What the controller tells the world once a change is durable: meters, hits, table states.

The sequencer publishes these only after the journal transaction behind them has committed
(docs/architecture.md). Sinks (signs, MQTT meter topics, the web display, metrics) receive them
through :class:`controller.runtime.broadcast.Broadcast`. Money is integer cents.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import msgspec

from controller.events import CheckpointRecorded
from controller.signed_head import SignedHead as SignedHead  # noqa: PLC0414 - re-exported

if TYPE_CHECKING:
    from controller.effects import PayoutMade, WagerRefused


log = logging.getLogger(__name__)


class _Epoch(msgspec.Struct, frozen=True, kw_only=True):
    """The sequencer epoch of the journal that committed an update (keyword-only, last)."""

    epoch: int = 0
    """0 for a journal only one controller writes (an SQLite file); it grows at each takeover
    of a journal several controller nodes share (docs/ha.md, "Brokers and followers")."""


class Update(_Epoch, frozen=True, tag_field="type"):
    """Fields every update has: when, the journal row it follows from (0 if none), the epoch.

    ``(epoch, seq)`` orders what followers are told: a sign or display keeps the highest it
    has applied and drops anything older (:class:`FollowerOrder`), so a leader that lost its
    fence (a zombie) cannot roll a meter back.
    """

    at: str
    seq: int


class MeterUpdate(Update, frozen=True, tag="meter"):
    """A pool's meters as they now stand."""

    pool_id: str
    meter_cents: int
    reserve_cents: int
    overflow_cents: int
    seed_cents: int
    status: str | msgspec.UnsetType = msgspec.UNSET
    """``suspended`` or ``retired`` (controller/ledger/pool_life.py); ``UNSET`` (never encoded)
    while the pool is in play, so a pool in play's update, its signed document and its digest
    are byte for byte what they were before a pool had a life (docs/signs.md, "A pool's life")."""
    status_reason: str | msgspec.UnsetType = msgspec.UNSET
    """Why, as journaled (a transfer's names the pool it went to); ``UNSET`` while in play."""
    transferred_in_cents: int | msgspec.UnsetType = msgspec.UNSET
    """What other pools' transfers brought onto this one, whole cents; ``UNSET`` if none."""
    transferred_from: str | msgspec.UnsetType = msgspec.UNSET
    """The pools whose transfer brought it, while each stands suspended as transferred to this
    one (their reason names it); ``UNSET`` if none does."""
    must_hit_by_cents: int | msgspec.UnsetType = msgspec.UNSET
    """A mystery level's ceiling, the "must hit by" its signs and display show (public, unlike
    its sealed trigger: docs/rules.md § 10); ``UNSET`` on every other pool, whose update and
    signed bytes are therefore the ones they always were."""


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


class HeadUpdate(Update, frozen=True, tag="head"):
    """A signed head of the journal (its high-water mark), published off the box.

    The retained MQTT topic ``controller/<id>/head`` holds it, where the journal's writer cannot
    rewrite it.
    """

    head: SignedHead


class PoolUpdate(Update, frozen=True, tag="pool"):
    """A pool's progressive opened or closed as a whole, and why (a sign shows the reason).

    A property's wide-area pool closes while its link to central is (docs/wide-area.md): the
    reason is short enough for a sign's line.
    """

    pool_id: str
    open: bool
    reason: str


AnyUpdate = (
    MeterUpdate
    | HitAnnouncement
    | TableUpdate
    | WagerRefusal
    | ControllerUpdate
    | CheckpointUpdate
    | PoolUpdate
    | HeadUpdate
)


def hit_announcement(
    payout: PayoutMade, at: str, seq: int, epoch: int = 0
) -> HitAnnouncement | None:
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
        epoch=epoch,
    )


def wager_refusal(refused: WagerRefused, at: str, seq: int, epoch: int = 0) -> WagerRefusal:
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
        epoch=epoch,
    )


class FollowerOrder:
    """What a follower (a sign, a display) has applied: the highest ``(epoch, seq)`` per key.

    A follower hears the controller through brokers and proxies that may hand it an old
    message late: a retained meter a paused leader (a zombie) publishes after it lost its
    fence, a redelivery, a page's answer overtaken by a newer event. It applies an update only
    if its ``(epoch, seq)`` is above the highest it applied for that key (a pool's meter, a
    table's state); an older one is *stale*: dropped and counted in :attr:`stale`, logged the
    first time for each key. The same ``(epoch, seq)`` again (the retained copy a broker sends
    at each subscription) is the same row: it applies, harmlessly.

    An update from no journal row (``seq`` 0: the controller failing closed, recovering,
    stopping) is ordered by its epoch alone: it applies unless an older epoch's.
    """

    def __init__(self, name: str = "follower") -> None:
        self.name = name
        self.highest: dict[str, tuple[int, int]] = {}
        """The highest ``(epoch, seq)`` applied, per key."""
        self.stale = 0
        """Updates dropped because they were older than one already applied."""
        self._logged: set[str] = set()

    def admits(self, key: str, epoch: int, seq: int) -> bool:
        """Whether an update for ``key`` at ``(epoch, seq)`` is to be applied (it is recorded)."""
        last = self.highest.get(key)
        if last is None:
            self.highest[key] = (epoch, seq)
            return True
        if seq == 0 and epoch >= last[0]:
            # No row: ordered by epoch only, and it does not lower the row seen.
            self.highest[key] = (epoch, last[1] if epoch == last[0] else 0)
            return True
        if (epoch, seq) < last:
            self.stale += 1
            if key not in self._logged:
                self._logged.add(key)
                log.warning(
                    "%s: dropped an update for %s at epoch %d row %d, older than epoch %d row "
                    "%d already shown (a former leader's, or a late copy); further ones are "
                    "only counted",
                    self.name,
                    key,
                    epoch,
                    seq,
                    *last,
                )
            return False
        self.highest[key] = (epoch, seq)
        return True
