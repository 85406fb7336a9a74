"""What the rest of the controller needs of a journal: the port every backend implements.

:class:`controller.journal.sqlite.store.Journal` (one SQLite file) is today's backend; another (a
replicated database, for high availability) implements the same protocol and passes the same
contract tests (tests/journal/contract/). docs/journal.md describes each member.

Writes go through a :class:`PreparedAppend`: :meth:`JournalPort.prepare` writes a group of events
without committing, the sequencer commits beside the event loop, and :meth:`JournalPort.adopt`
moves the in-memory state on once the commit is durable. A failure anywhere leaves the journal
and its state as they were (the caller fails closed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from controller.journal.domain import State

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.effects import PayoutMade
    from controller.events import AnyEvent, SequencerTookOver
    from controller.journal.anchors import Anchor
    from controller.journal.checkpoints import Sealed
    from controller.journal.domain import Domain
    from controller.journal.location import JournalLocation
    from controller.journal.reads import Hit, PayoutRecord, PendingPayout
    from controller.journal.row_checks import VerifyReport
    from controller.journal.state_trust import StateCheck
    from controller.outputs import SignedHead
    from controller.ports import Outbox, Receipt
    from controller.provenances import Provenances
    from controller.security.controller_key import ControllerKey
    from controller.widearea.messages import SiteMessage


class PreparedAppend(Protocol):
    """Events written under the journal's write lock, not yet durable."""

    @property
    def committed(self) -> bool:
        """Whether :meth:`commit` has returned."""

    @property
    def receipts(self) -> list[Receipt]:
        """What became of each event, valid once committed."""

    def commit(self) -> None:
        """Make the events durable, or roll back and raise ``JournalError``.

        It may run in another thread than the one that prepared it.
        """


_Prepared = TypeVar("_Prepared", bound=PreparedAppend)


class JournalPort(Protocol[_Prepared, State]):
    """The ledger's durable home, as the sequencer, start-up, CLI, display and metrics use it.

    Generic in the backend's prepared append (:meth:`adopt` takes back what :meth:`prepare`
    gave) and in the state of the domain it records (:class:`controller.journal.domain.Domain`):
    the application names the ledger's (``controller.ledger_journal.LedgerJournal``).
    """

    @property
    def path(self) -> JournalLocation:
        """Where the journal is: its file, or its database's URL (shown without a password)."""

    @property
    def state(self) -> State:
        """The domain's state after the last adopted row."""

    @property
    def domain(self) -> Domain[State]:
        """What the journal's rows are applied and replayed with, its state read back by.

        Given when the journal is opened (:class:`controller.journal.domain.Domain`); its
        checkpoints' snapshots are the domain's too.
        """

    @property
    def head(self) -> tuple[int, str]:
        """The last row this journal knows: its ``seq`` and ``hash``."""

    @property
    def epoch(self) -> int:
        """The sequencer epoch this journal writes under (docs/ha.md, "The fenced sequencer").

        0 for a journal only one controller can write (a SQLite file); a journal shared by
        several controller nodes gives the epoch its fence holds, which grows at each
        takeover. Meters and acknowledgements carry it with the row's ``seq``, so a follower
        orders what it is told by ``(epoch, seq)``.
        """

    @property
    def took_over(self) -> SequencerTookOver | None:
        """This process's takeover of the sequencer's fence, as the event that journals it.

        None for a journal without a fence, and before a standby takes it. The service
        journals it first thing after taking over (docs/ha.md, "Takeovers in the journal").
        """

    @property
    def lease_renewal_s(self) -> float | None:
        """How often the sequencer renews its lease while no events come; None: no lease.

        A journal shared by several nodes renews the lease with every commit, and the
        sequencer calls :meth:`renew` when this long has passed without one.
        """

    @property
    def leading(self) -> bool:
        """Whether this process still holds the sequencer's fence, by its own clock.

        True for a journal without a fence (an SQLite file has one writer). With one, True
        while the lease last renewed (by a group commit or :meth:`renew`) has not run out by
        this process's monotonic clock, counted from before the renewal was sent: a process
        paused past its lease knows it no longer leads before it writes again (and its next
        write is fenced). ``GET /leader`` answers by it (docs/ha.md, "Brokers and followers").
        """

    def renew(self) -> None:
        """Renew the sequencer's lease; ``FencedError`` if another node has taken over.

        Nothing for a journal without a lease. It runs where commits run (the commit thread),
        never while a prepared append waits for its commit.
        """

    writer: str | None
    """The provenance of an append that names none: the command or the service that opened
    the journal (``cli <command>``, ``daemon``). None: an in-process writer that does not say,
    whose device input and table status a signed journal refuses (docs/journal.md,
    "Provenance")."""

    live_clock: Callable[[], str] | None
    """The controller's clock (UTC, ISO 8601) at a live append: a signed event whose signature's
    window does not hold it is refused (docs/security.md, "Bound signatures"). None: not checked
    (a replay, a copy, an in-process writer that gives no clock)."""

    def append(self, event: AnyEvent, *, provenance: str | None = None) -> Receipt:
        """Apply and journal one event durably; ``provenance`` says who wrote it."""

    def append_many(
        self,
        events: Sequence[AnyEvent],
        *,
        snapshot: Sealed | None = None,
        provenance: Provenances = None,
    ) -> list[Receipt]:
        """Apply and journal several events in one transaction (group commit).

        ``provenance``: where the events came from, one for all or one per event, written
        beside each row (docs/journal.md, "Provenance"); on a signed journal a device's input
        or a table's status not from the daemon's intake is journaled as a refusal's fault
        (:mod:`controller.journal.provenance`).
        """

    def prepare(
        self,
        events: Sequence[AnyEvent],
        *,
        snapshot: Sealed | None = None,
        provenance: Provenances = None,
        domain: Domain[State] | None = None,
    ) -> _Prepared:
        """Everything of :meth:`append_many` but the commit.

        ``domain``: what applies each event the journal will record; the sequencer hands the
        ledger's (:data:`controller.ledger.domain.LEDGER`); None: the journal's own
        (:attr:`domain`), docs/architecture.md, "The layers".
        """

    def adopt(self, transaction: _Prepared) -> list[Receipt]:
        """Move the state on to a committed transaction's; its receipts."""

    def device_highs(self) -> dict[tuple[str, str], int]:
        """The highest event ``seq`` journaled from each device."""

    def committed_seq(self) -> int:
        """The last committed row, as another reader sees it (0 if none)."""

    def pending_payouts(self) -> list[PendingPayout]:
        """The payouts awaiting verification, oldest first."""

    def oldest_pending_at(self) -> str | None:
        """When the oldest payout awaiting verification was made."""

    def hits(self, *, newest_first: bool = False, limit: int | None = None) -> list[Hit]:
        """The progressive hits paid from a meter."""

    def count_payouts(self, *, excluding_kind: str) -> int:
        """How many payouts the journal holds, those of one kind left out."""

    def verification_records(
        self, *, pending_only: bool = False, pool_id: str | None = None
    ) -> list[PayoutRecord]:
        """Progressive hits and payouts that needed verification, newest first."""

    def last_verified(self, limit: int) -> list[PayoutRecord]:
        """The last ``limit`` pays verified, the newest verification first."""

    def payouts_since(self, seq: int) -> list[tuple[int, str, PayoutMade]]:
        """Each payout made after row ``seq``, as made: its row, its time, the payout."""

    def site_messages(self, after: int, limit: int) -> list[SiteMessage]:
        """A property's outbox to central: its site messages after ``site_seq`` ``after``.

        In ``site_seq`` order, at most ``limit``, unsigned (the uplink signs each with the
        controller key as it sends it). Each was queued by a committed journal row, in that
        row's transaction, so the property's uplink sends what this gives after the last
        ``site_seq`` central acknowledged, and resends from there after a reconnection or a
        restart (docs/wide-area.md, "The chain of a property's messages"). Each message is
        checked against the journal row that queued it, and none may be missing up to the
        ledger's chain head: an outbox someone edited raises ``JournalError`` and nothing is
        sent (:mod:`controller.journal.site_messages`).
        """

    def verify(self, *, keys: Sequence[str] = (), anchors: Sequence[Anchor] = ()) -> VerifyReport:
        """Check the chain and replay the journal from empty."""

    def check_state(self, key: ControllerKey, high_water: SignedHead | None = None) -> StateCheck:
        """The start-up check: the materialized state against the rows (docs/journal.md).

        ``high_water``: the controller's last signed head; the journal must still hold it.
        """

    def outbox(self, sink: str) -> Outbox:
        """The named sink's outbox, kept beside the journal (:class:`controller.ports.Outbox`)."""

    def close(self) -> None:
        """Release the backend's connections."""
