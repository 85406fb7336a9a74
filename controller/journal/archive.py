"""Archiving: old journal rows moved out to sealed segments, the chain continuing across them.

``jackpotd archive --db J --before DATE | --rows N --out DIR`` (docs/journal.md, "Archives";
docs/operations.md, "Archiving"):

1. the journal must verify first (:func:`controller.journal.sqlite.verify.verify`, with the
   controller's keys when given): nothing broken is archived;
2. the rows to move end at the last one dated before ``DATE`` with every row before it (a row
   dated later stops the run, whatever follows), or ``N`` rows after the last archive. They are
   cut into segments of at most :data:`SEGMENT_ROWS` rows. When the journal holds the
   controller's checkpoints, a segment ends only at a row a checkpoint covers: each cut is
   then signed, and the checkpoint (which stays in the live journal, and is sealed in the
   segment's trailer) states the cut's hash and the state after it. The last row is never
   archived;
3. each segment's rows are replayed from the state the previous archive recorded (or from
   empty) and written, as their canonical text, to a new segment
   (:mod:`controller.journal.segments`), synced before anything is removed;
4. then, in **one** transaction, the live journal records the segment in ``archives`` (its
   name, range, first and last hashes, rows, the file's SHA-256, the checkpoint's row, and the
   state after the cut) and removes its rows, their snapshots, and the payouts they made that
   were not pending at the cut: the file is never seen half archived, and a service writing it
   waits a moment. A payout pending at the cut stays with the live rows: a supervisor
   verifies it later.

The live chain continues: the first row after the cut chains to the hash the record keeps.
:func:`controller.journal.sqlite.verify.verify` checks segments and live rows as one chain given the
folder of segments, and otherwise verifies from the recorded state and hash after the cut.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol

from controller.journal.archive_records import COLUMNS, ArchiveRecord
from controller.journal.chain import GENESIS, text_digest
from controller.journal.checkpoints import checkpoint_of
from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.segments import write_segment

__all__ = ["COLUMNS", "ArchiveRecord", "archive_from"]

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable, Iterator, Sequence
    from pathlib import Path

    from controller.events import CheckpointRecorded
    from controller.journal.domain import Domain
    from controller.journal.rows import Row

SEGMENT_ROWS: Final = 200_000
"""Rows a segment holds at most, where checkpoints allow: each is recorded and its rows removed
in one transaction, which a service writing the same file waits for (a second or so)."""


class ArchiveSource(Protocol):
    """What archiving reads of a journal, in one snapshot, and how it records a segment.

    The SQLite file's (controller/journal/sqlite/file_archive.py) and the PostgreSQL database's
    (:mod:`controller.journal.postgres.archive`): the same rows, cuts and segments either way.
    """

    @property
    def where(self) -> str:
        """What names the journal in messages."""
        ...

    def records(self) -> list[ArchiveRecord]:
        """The segments the journal records, in order."""
        ...

    def head(self) -> int:
        """The last row's ``seq`` (0 if none)."""
        ...

    def times(self, after: int) -> Iterable[tuple[int, str]]:
        """Each row's ``seq`` and canonical time after row ``after``, in order."""
        ...

    def checkpoint_rows(self) -> Iterable[Row]:
        """The checkpoint rows, in order."""
        ...

    def rows(self, after: int) -> Generator[Row]:
        """Every row after row ``after``, in order, canonical, its provenance among its values.

        (:func:`~controller.journal.provenance.with_provenance`; closed when left early.)
        """
        ...

    def record(
        self, records: list[ArchiveRecord], record: ArchiveRecord, pending: set[str]
    ) -> None:
        """Record the segment and remove its rows in one transaction (``records``: those read)."""
        ...


def parse_moment(text: str) -> datetime:
    """``DATE`` or ``DATETIME`` (ISO 8601; UTC unless it says otherwise) as a moment."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise JournalError(f"{text!r} is not a date or time (ISO 8601)") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _candidate(
    source: ArchiveSource, after: int, head: int, before: datetime | None, rows: int | None
) -> int:
    """The last row the criterion would archive (see the module docstring)."""
    if rows is not None:
        return min(after + rows, head - 1)
    if before is None:
        raise JournalError("say which rows to archive: --before DATE or --rows N")
    last = after
    for seq, at in source.times(after):
        try:
            dated = datetime.fromisoformat(at)
        except ValueError:
            break  # a time that cannot be read: nothing after it is taken as older
        if (dated if dated.tzinfo else dated.replace(tzinfo=UTC)) >= before or seq >= head:
            break
        last = seq
    return last


def _checkpoints(source: ArchiveSource, after: int) -> list[tuple[int, CheckpointRecorded]]:
    """The live checkpoints after row ``after``: their rows and what they state."""
    found = []
    for row in source.checkpoint_rows():
        event = checkpoint_of(str(row.values["event"]))
        if event is not None and int(row.values["seq"]) > after:
            found.append((int(row.values["seq"]), event))
    return found


def _cuts(
    checkpoints: list[tuple[int, CheckpointRecorded]], after: int, candidate: int
) -> Iterator[tuple[int, tuple[int, CheckpointRecorded] | None]]:
    """Each segment's cut, at most :data:`SEGMENT_ROWS` apart where checkpoints allow.

    Without checkpoints, cut anywhere; with them, only where one covers a row.
    """
    if not checkpoints:
        while after < candidate:
            after = min(after + SEGMENT_ROWS, candidate)
            yield after, None
        return
    covering = sorted(
        ((event.head_seq, (seq, event)) for seq, event in checkpoints),
        key=lambda found: found[0],
    )
    heads = [(head, found) for head, found in covering if after < head <= candidate]
    if not heads:
        raise JournalError(
            f"no checkpoint covers a row from {after + 1} to {candidate}: nothing archived "
            "(a cut is made where a checkpoint is; the controller writes one every "
            "checkpoint_rows rows)"
        )
    while heads:
        within = [item for item in heads if item[0] <= after + SEGMENT_ROWS] or heads[:1]
        head, found = within[-1]
        yield head, found
        after = head
        heads = [item for item in heads if item[0] > after]


@dataclass(slots=True)
class _Replay(Generic[State]):
    """The rows of a segment, replayed as they are written to it (a refused row changes nothing)."""

    domain: Domain[State]
    state: State
    last: tuple[int, str] = (0, GENESIS)

    def rows(self, source: ArchiveSource, after: int, cut: int) -> Iterator[dict[str, Any]]:
        """The canonical rows after ``after`` up to ``cut``, each applied as it goes."""
        # Closed at the cut, not when collected: a database's cursor is freed at once.
        with contextlib.closing(source.rows(after)) as read:
            yield from self._applied(read, cut)

    def _applied(self, read: Iterator[Row], cut: int) -> Iterator[dict[str, Any]]:
        for row in read:
            seq = int(row.values["seq"])
            if seq > cut:
                return
            if row.event is None or row.form:
                raise JournalError(f"row {seq}: {row.form or 'not an event'}; nothing archived")
            self.state, _, _ = self.domain.step(self.state, row.event)
            self.last = (seq, str(row.values["hash"]))
            yield row.values


def not_verified(where: str, problems: Sequence[str]) -> JournalError:
    """What archiving says of a journal that does not verify: nothing broken is archived."""
    shown = "; ".join(problems[:3])
    return JournalError(f"{where}: the journal does not verify ({shown}); nothing archived")


def archive_from(
    domain: Domain[State],
    source: ArchiveSource,
    directory: Path,
    criterion: tuple[datetime | None, int | None],
    now: str,
) -> list[ArchiveRecord]:
    """Cut, write and record the segments of the rows ``criterion`` names (before, rows).

    ``domain`` replays the rows, so that each segment's record holds the state after its last.
    """
    records = source.records()
    previous = records[-1] if records else None
    after = previous.last_seq if previous else 0
    chained = previous.last_hash if previous else GENESIS
    replay = _Replay(domain, domain.state_from_text(previous.state) if previous else domain.empty())
    candidate = _candidate(source, after, source.head(), *criterion)
    if candidate <= after:
        raise JournalError(f"{source.where}: no row to archive after row {after}; nothing archived")
    written: list[ArchiveRecord] = []
    for cut, checkpoint in _cuts(_checkpoints(source, after), after, candidate):
        record = _segment(source, directory, replay, (after, chained, cut), checkpoint, now=now)
        source.record(records, record, set(replay.state.pending))
        records, written = [*records, record], [*written, record]
        after, chained = record.last_seq, record.last_hash
    return written


def _segment(  # noqa: PLR0913 - one segment's parts
    source: ArchiveSource,
    directory: Path,
    replay: _Replay[Any],
    span: tuple[int, str, int],
    checkpoint: tuple[int, CheckpointRecorded] | None,
    *,
    now: str,
) -> ArchiveRecord:
    """Write the segment of rows ``after + 1`` to ``cut``; its record (not yet stored)."""
    after, chained, cut = span

    def end() -> tuple[str, str | None]:
        text = replay.domain.snapshot_text(replay.state)
        if checkpoint is not None:
            event = checkpoint[1]
            if (event.head_hash, event.state_digest) != (replay.last[1], text_digest(text)):
                raise JournalError(
                    f"the checkpoint at row {checkpoint[0]} does not state row {cut}'s hash and "
                    "the state after it; nothing archived"
                )
        return text_digest(text), None if checkpoint is None else _text_of(source, checkpoint[0])

    sealed = write_segment(
        directory, replay.rows(source, after, cut), start=(after + 1, chained), end=end
    )
    return ArchiveRecord(
        **asdict(sealed),
        checkpoint_seq=None if checkpoint is None else checkpoint[0],
        state=replay.domain.snapshot_text(replay.state),
        archived_at=now,
    )


def _text_of(source: ArchiveSource, seq: int) -> str:
    with contextlib.closing(source.rows(seq - 1)) as read:
        return str(next(read).values["event"])


def not_recorded(where: str, record: ArchiveRecord, error: object) -> JournalError:
    """What archiving says when a segment written could not be recorded: nothing removed."""
    return JournalError(
        f"{where}: the archive of rows {record.first_seq} to {record.last_seq} could not be "
        f"recorded ({error}); the journal was left as it was"
    )


def record_values(record: ArchiveRecord) -> tuple[Any, ...]:
    """The record's values in the order of the ``archives`` table's columns."""
    return tuple(getattr(record, name) for name in COLUMNS)


def same_records(where: str, found: list[ArchiveRecord], read: list[ArchiveRecord]) -> None:
    """Refuse to record when the records changed since they were read (another archive ran)."""
    if found != read:
        raise JournalError(f"{where}: another archive was made meanwhile; run it again")
