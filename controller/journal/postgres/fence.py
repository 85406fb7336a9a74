"""The sequencer's fence in a PostgreSQL journal: one row, an epoch, a holder, a lease (docs/ha.md).

Several controller nodes may open one journal; one at a time sequences. The row
``sequencer_fence`` (one per journal, named ``journal``) holds the epoch of the node that
sequences, its node id and when its lease runs out, by the database's clock (so that the
nodes' clocks do not matter).

* **Taking over** (:func:`take_over`, when a node opens the journal) increments the epoch. It
  is allowed when the lease has run out, or when the holder is this same node id (the node
  restarting: its old process is dead, or if it is not, the new epoch fences it). Found live
  and held by another node, the lease is waited for once, to the end the row gives, if that
  is within one lease of ours (a dead holder's lease runs out by then); if it was renewed
  meanwhile the holder is alive and the takeover is refused with :class:`FencedError`.
* **Holding** (:func:`hold`) is the first statement of every group commit's transaction: it
  renews the lease only if the row still holds this node's epoch, and locks the row until the
  ``COMMIT`` ends. A takeover waits for that commit, and a commit after a takeover finds
  another epoch and writes nothing: the old leader's transaction is rolled back and it steps
  down. Safety rests on the epoch alone; the lease only says when a takeover is allowed.
* **Renewing** (:func:`renew`) on a timer while no events come, in a transaction of its own.
* **Releasing** (:func:`release`) at a clean stop ends the lease now, so the next node need
  not wait for it.

What does not wait for synchronous replication (``synchronous_commit = local``): taking over,
renewing and releasing. Nothing is acknowledged to anyone on them, and every group commit
writes the fence row and waits for replication, which streams in order: a takeover that a
failover loses leaves its node fenced at its first commit on the promoted standby, and no
acknowledgement ever rests on an unreplicated row. So a node can take over while the standby
is away, and its first commit waits (docs/ha.md, "A COMMIT that hangs").

:class:`Fence` (a node's id and lease) is what every service builds, whichever its journal:
psycopg is imported by the functions that reach a database only, so an SQLite journal's
process never loads it (controller/journal/backends.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from controller.events import SequencerTookOver
from controller.journal.errors import FencedError, JournalError

if TYPE_CHECKING:
    from controller.journal.postgres.connection import Connection

ROW: Final = "journal"
"""The fence's row: one sequencer per journal, whatever the nodes' configurations name."""
TABLE: Final = """CREATE TABLE sequencer_fence (
        name TEXT PRIMARY KEY,
        epoch BIGINT NOT NULL,
        holder TEXT NOT NULL,
        lease_expires TIMESTAMPTZ NOT NULL
    )"""

_TAKE: Final = """
INSERT INTO sequencer_fence (name, epoch, holder, lease_expires)
VALUES (%(row)s, 1, %(node)s, clock_timestamp() + %(lease)s * interval '1 second')
ON CONFLICT (name) DO UPDATE SET
    epoch = sequencer_fence.epoch + 1,
    holder = EXCLUDED.holder,
    lease_expires = EXCLUDED.lease_expires
WHERE sequencer_fence.lease_expires <= clock_timestamp() OR sequencer_fence.holder = EXCLUDED.holder
RETURNING epoch"""
_HOLD: Final = (
    "UPDATE sequencer_fence SET lease_expires = clock_timestamp() + %s * interval '1 second' "
    "WHERE name = %s AND epoch = %s RETURNING epoch"
)
_HOLDER: Final = (
    "SELECT epoch, holder, extract(epoch FROM lease_expires - clock_timestamp())::float8 "
    "FROM sequencer_fence WHERE name = %s"
)
_BEFORE: Final = _HOLDER + " FOR UPDATE"
"""The row as it stands before a takeover, locked: whom the takeover is from."""
MARGIN_S: Final = 0.05
"""Past the lease's end before a retry of a takeover (the clocks' resolutions)."""


@dataclass(frozen=True, slots=True)
class Fence:
    """Who this node is, and how long its lease lasts (``[controller] node``, ``lease_s``)."""

    node: str
    lease_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.node:
            raise ValueError("a fence needs a node id")
        if not self.lease_s > 0:
            raise ValueError(f"a lease must last more than 0 s, not {self.lease_s}")

    @property
    def lease_ms(self) -> int:
        """The lease in milliseconds, as PostgreSQL's timeouts take it."""
        return max(1, round(self.lease_s * 1000))


def _local(connection: Connection, lock_ms: int, idle_ms: int) -> None:
    """This transaction: no wait for replication, a row lock waited for ``lock_ms`` at most.

    And its session ended by the server once it sits idle in it for ``idle_ms``: a node cut
    off (or paused) after its ``UPDATE`` of the fence row and before its ``COMMIT`` would hold
    the row's lock for as long as its connection lives, and no node could take over.
    """
    connection.execute("SET LOCAL synchronous_commit = local")
    connection.execute(f"SET LOCAL lock_timeout = {lock_ms}")
    connection.execute(f"SET LOCAL idle_in_transaction_session_timeout = {idle_ms}")


@dataclass(frozen=True, slots=True)
class Held:
    """The fence as a node found it that could not take it: who holds it, until when."""

    epoch: int
    holder: str
    left_s: float
    """Seconds the holder's lease has left by the database's clock (negative: run out)."""

    def refusal(self, fence: Fence, where: str) -> FencedError:
        """Why ``fence.node`` did not take over."""
        return FencedError(
            f"{where}: node {self.holder!r} holds the sequencer (epoch {self.epoch}) and renews "
            f"its lease ({self.left_s:.1f} s left): this node ({fence.node!r}) does not take "
            "over a live sequencer"
        )


@dataclass(frozen=True, slots=True)
class Taken:
    """A takeover: the new epoch, and the fence as it stood before (whom it was taken from)."""

    epoch: int
    before: Held


def holder(connection: Connection) -> Held:
    """The fence row's epoch, holder and seconds its lease has left (a plain read, no lock)."""
    return _held(connection.execute(_HOLDER, [ROW]).fetchone())


def _held(row: tuple[object, ...] | None) -> Held:
    """The fence row read by :data:`_HOLDER`; none yet (no node ever took it): anyone may."""
    if row is None:
        return Held(0, "", 0.0)
    epoch, node, left_s = row
    return Held(int(str(epoch)), str(node), float(str(left_s)))


def attempt(connection: Connection, fence: Fence, where: str) -> Taken | Held:
    """One try at taking the fence, no waiting for a lease: the takeover, or who holds it."""
    from psycopg import errors as pg_errors  # noqa: PLC0415 - a database's only (module docstring)

    try:
        with connection.transaction():
            # Two leases: a holder paused inside a transaction loses its session after one
            # (hold()), and a commit still running after two is hung.
            _local(connection, 2 * fence.lease_ms, fence.lease_ms)
            # The row as it stands, locked: whom a takeover is from, or who keeps it.
            before = _held(connection.execute(_BEFORE, [ROW]).fetchone())
            row = connection.execute(
                _TAKE, {"row": ROW, "node": fence.node, "lease": fence.lease_s}
            ).fetchone()
            return Taken(int(row[0]), before) if row is not None else before
    except pg_errors.LockNotAvailable:
        raise FencedError(
            f"{where}: cannot take the sequencer's fence: a commit of the node that held "
            f"it is still running after {2 * fence.lease_s:g} s (waiting on replication?); "
            "try again once it has ended"
        ) from None


def take_over(connection: Connection, fence: Fence, where: str) -> Taken:
    """Take the fence for ``fence.node``: the takeover; :class:`FencedError` if refused."""
    taken = attempt(connection, fence, where)
    if isinstance(taken, Held) and taken.left_s <= fence.lease_s:
        # One wait, to the end of the lease the row gives: a dead holder's has run out then.
        time.sleep(max(0.0, taken.left_s) + MARGIN_S)
        taken = attempt(connection, fence, where)
    if isinstance(taken, Held):
        raise taken.refusal(fence, where)
    return taken


def _fenced(connection: Connection, fence: Fence, epoch: int, where: str) -> FencedError:
    now = holder(connection)
    return FencedError(
        f"{where}: node {now.holder!r} took the sequencer over (epoch {now.epoch}); this node "
        f"({fence.node!r}, epoch {epoch}) wrote nothing and steps down"
    )


def hold(connection: Connection, fence: Fence, epoch: int, where: str) -> None:
    """In a group commit's transaction, before anything else: renew and lock, or be fenced.

    A lock (the journal's, held by a command writing) is waited for one lease at most. From
    here the fence row is locked: a process paused before its writes (SIGSTOP) sits idle in
    the transaction, and the server ends its session after a lease, as :func:`arm` makes it
    do once the writes are sent.
    """
    connection.execute(f"SET LOCAL idle_in_transaction_session_timeout = {fence.lease_ms}")
    connection.execute(f"SET LOCAL lock_timeout = {fence.lease_ms}")
    if connection.execute(_HOLD, [fence.lease_s, ROW, epoch]).fetchone() is None:
        raise _fenced(connection, fence, epoch, where)


def arm(connection: Connection, fence: Fence) -> None:
    """The group commit's last statement before its ``COMMIT``: end the session if it waits.

    A process paused between its writes and its ``COMMIT`` (SIGSTOP, a stalled VM) would hold
    the journal's lock and the fence row's, and no other node could take over: the server
    ends its session once it has sat idle in the transaction for a lease. It is the last
    statement because the server arms that timer only after a statement sent alone; after a
    pipeline (psycopg's ``executemany``) it does not.
    """
    connection.execute(f"SET LOCAL idle_in_transaction_session_timeout = {fence.lease_ms}")


def renew(connection: Connection, fence: Fence, epoch: int, where: str) -> None:
    """Renew the lease in a transaction of its own; :class:`FencedError` if taken over."""
    import psycopg  # noqa: PLC0415 - a database's only (module docstring)

    try:
        with connection.transaction():
            _local(connection, fence.lease_ms, fence.lease_ms)
            if connection.execute(_HOLD, [fence.lease_s, ROW, epoch]).fetchone() is None:
                raise _fenced(connection, fence, epoch, where)
    except psycopg.Error as error:
        raise JournalError(f"{where}: cannot renew the sequencer's lease: {error}") from error


def release(connection: Connection, fence: Fence, epoch: int) -> None:
    """End this node's lease now (a clean stop), if it still holds the fence; best effort."""
    with connection.transaction():
        _local(connection, fence.lease_ms, fence.lease_ms)
        connection.execute(
            "UPDATE sequencer_fence SET lease_expires = clock_timestamp() "
            "WHERE name = %s AND epoch = %s",
            [ROW, epoch],
        )


def takeover_event(taken: Taken, node: str, at: str) -> SequencerTookOver:
    """The event that journals a takeover (its id ``takeover-<epoch>``: one per epoch)."""
    before = taken.before
    left_ms = round(before.left_s * 1000)
    if not before.holder:
        why = "the journal's first sequencer"
    elif before.holder == node:
        why = f"node {node!r} restarting (its epoch {before.epoch} fenced)"
    else:
        why = f"node {before.holder!r}'s lease (epoch {before.epoch}) ran out {-left_ms} ms before"
    return SequencerTookOver(
        f"takeover-{taken.epoch}", at, node, taken.epoch, before.holder, before.epoch, left_ms, why
    )
