"""Moving a journal into an empty journal of another backend (``journal copy``).

The source is read only, through its backend (:func:`controller.journal.backends.backend_for`),
and verified first: a journal that does not verify, or whose first rows are archived to
segments (the copy holds every row from the first), is not copied. The target must hold no
journal row yet (an empty database is given the journal's tables; one of other tables is
refused). The command moves an SQLite file into a PostgreSQL database (docs/ha.md); the copy
itself names no backend, so a database can be copied into a file (a lab's copy of central's
journal) or any journal into one in memory (the tests).

Each row's event is appended to the target **in the source's order**, through the target's
backend as the service appends (:mod:`controller.journal.appending`): the domain applies it
again, authority and all, and makes the row, its hash and the materialized state (a
property's outbox to central included: its site messages are made again by the rows that
queue them, so the copy holds every one the source holds, sent or not). So the copy is not
taken on trust: after each batch the target's head must be the source's row, seq and hash,
or the copy stops (the chain covers every row before it). A signed checkpoint whose snapshot
the source keeps is appended with it, so the target keeps the same snapshots.

At the end both are verified again (``jackpotd verify``'s checks: chain, replay, state,
payouts, the outbox of site messages, checkpoints and their signatures under the keys
given, anchors), and their heads must be the same row and hash; a source that grew meanwhile
(the service was not stopped) is said, and the copy is not to be used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from controller.events import CheckpointRecorded
from controller.journal.backends import backend_for
from controller.journal.chain import GENESIS
from controller.journal.checkpoints import Sealed
from controller.journal.errors import JournalError
from controller.journal.provenance import PROVENANCE, with_provenance
from controller.provenances import COPY

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent
    from controller.journal.anchors import Anchor
    from controller.journal.backends import JournalBackend
    from controller.journal.domain import Domain, State
    from controller.journal.location import JournalLocation
    from controller.journal.port import JournalPort
    from controller.journal.row_checks import VerifyReport
    from controller.journal.rows import Row

BATCH: Final = 1000
"""Rows appended to the database per transaction."""


@dataclass(frozen=True, slots=True)
class Copied:
    """A copy made: the file's verification and the database's, whose heads are the same."""

    source: VerifyReport
    target: VerifyReport

    @property
    def head(self) -> tuple[int, str]:
        """The last row both hold, and its hash."""
        return self.target.head


def _first_problem(report: VerifyReport) -> str:
    shown = "; ".join(report.problems[:3])
    more = len(report.problems) - 3
    return shown + (f" (and {more} more)" if more > 0 else "")


def _verified(
    backend: JournalBackend[Any], keys: Sequence[str], anchors: Sequence[Anchor]
) -> VerifyReport:
    return backend.verify(keys=keys, anchors=anchors, progress=None, archives=None)


def _check_source(
    source: JournalBackend[Any], keys: Sequence[str], anchors: Sequence[Anchor]
) -> VerifyReport:
    """The source's verification; refuses a journal that fails it or has archived rows."""
    source.require()
    report = _verified(source, keys, anchors)
    where = source.location
    if not report.ok:
        raise JournalError(
            f"{where}: the journal does not verify, so it is not copied: {_first_problem(report)}"
        )
    if report.archived:
        raise JournalError(
            f"{where}: rows 1 to {report.archived} are archived to segments; the copy holds "
            "every row from the first, so this journal cannot be copied"
        )
    return report


class _Copy:
    """The rows of the file appended to the database, batch by batch, each batch checked."""

    def __init__(self, target: JournalPort[Any, Any], snapshots: dict[int, str]) -> None:
        self.target = target
        self.snapshots = snapshots
        self.events: list[AnyEvent] = []
        self.provenances: list[str] = []
        self.last: Row | None = None
        self.sealed: Sealed | None = None

    def add(self, row: Row) -> None:
        """Take one row of the file; append the batch when it is full or holds a snapshot."""
        seq = int(row.values["seq"])
        if row.event is None or row.form:
            raise JournalError(f"row {seq}: its stored event cannot be read back ({row.form})")
        self.events.append(row.event)
        # The source's provenance, carried (a row that recorded none: ``copy``); the ledger
        # takes each row as the source took it (controller/provenances.py ``copied``).
        self.provenances.append(row.values.get(PROVENANCE) or COPY)
        self.last = row
        if (text := self.snapshots.get(seq)) is not None:
            if not isinstance(row.event, CheckpointRecorded):  # verify refuses such a file
                raise JournalError(f"row {seq}: a snapshot is kept for a row that is no checkpoint")
            self.sealed = Sealed(row.event, text)
        if self.sealed is not None or len(self.events) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Append the batch; the database's head must then be the file's last row."""
        if not self.events or self.last is None:
            return
        receipts = self.target.append_many(
            self.events, snapshot=self.sealed, provenance=self.provenances
        )
        values = self.last.values
        expected = (int(values["seq"]), str(values["hash"]))
        fresh = all(not receipt.duplicate for receipt in receipts)
        if self.target.head != expected or not fresh:
            raise JournalError(
                f"{self.target.path}: row {expected[0]} of the copy is not the file's (its hash "
                f"differs): the copy stops; drop the database's tables before copying again"
            )
        self.events, self.provenances, self.sealed = [], [], None


def copy_journal(  # noqa: PLR0913 - the two journals, their domain, the command's options
    source: JournalLocation,
    target: JournalLocation,
    *,
    domain: Domain[State],
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
) -> Copied:
    """Copy the journal ``source`` into the empty journal ``target`` (the module docstring).

    ``domain``: what both are replayed with when they are verified, before and after.
    """
    if str(source) == str(target):
        raise JournalError(f"{source}: a journal is copied into another, not onto itself")
    origin, backend = backend_for(source, domain), backend_for(target, domain)
    before = _check_source(origin, keys, anchors)
    journal = backend.open()
    try:
        if journal.head != (0, GENESIS):
            raise JournalError(
                f"{target}: it already holds a journal (row {journal.head[0]}): a journal is "
                "copied into an empty one only"
            )
        with origin.reader() as reader:
            snapshots = {snapshot.seq: snapshot.state for snapshot in reader.snapshots()}
            copy = _Copy(journal, snapshots)
            rows = with_provenance(reader.read(), reader.provenances())
            for done, row in enumerate(rows, start=1):
                copy.add(row)
                if progress is not None and done % BATCH == 0:
                    progress(done, before.rows)
            copy.flush()
    finally:
        journal.close()
    if progress is not None:
        progress(before.rows, before.rows)
    after, copied = _verified(origin, keys, anchors), _verified(backend, keys, anchors)
    if not after.ok:
        raise JournalError(f"{source}: the journal no longer verifies: {_first_problem(after)}")
    if not copied.ok:
        raise JournalError(f"{target}: the copy does not verify: {_first_problem(copied)}")
    if after.head != copied.head:
        raise JournalError(
            f"{source}: the journal is at row {after.head[0]}, the copy at row "
            f"{copied.head[0]}: the source was written during the copy (stop the service "
            "first); drop the copy's tables and copy again"
        )
    return Copied(after, copied)
