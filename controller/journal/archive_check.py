"""``jackpotd verify`` of an archived journal: the segments and the live rows as one chain.

Given the folder of segments (``--archives DIR``), verification reads each segment the journal
records, in order, and then the live rows, as one run of rows replayed from empty
(:func:`segment_rows`). For each segment it checks that the file is there, that its SHA-256 is
the one recorded when it was archived, that its lines are those its trailer sealed, that it
holds the rows the record says and chains from the hash before them, and at its end
(:func:`check_cut`) that the replay reaches the hash and the state the record keeps, and that
the checkpoint sealed in it, if any, states them (signed, when the controller's keys are
given). The live journal then continues from that hash.

Without the folder, verification starts after the last archived row, from the state and hash
its record keeps (:func:`start_after`); the report says which rows are archived, and anything
that vouches for an archived row (an anchor, a checkpoint signed under a key given) needs the
segments to be checked (docs/journal.md, "Archives").
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

from controller.journal.chain import GENESIS, text_digest
from controller.journal.checkpoints import KIND, checkpoint_of, signature_holds
from controller.journal.domain import State
from controller.journal.rows import Row
from controller.journal.segments import SegmentError, SegmentReader, file_sha256

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from controller.events import CheckpointRecorded
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain


@dataclass(frozen=True, slots=True)
class Cut:
    """The end of a segment whose rows were read: the replay must be where its record says."""

    record: ArchiveRecord


@dataclass(frozen=True, slots=True)
class Resume:
    """A segment that could not be read: the replay resumes from what its record keeps."""

    record: ArchiveRecord


@dataclass(slots=True)
class Start(Generic[State]):
    """Where the live rows' verification starts: after row ``seq``, its hash, the state there."""

    state: State
    seq: int = 0
    hash: str = GENESIS
    records: list[ArchiveRecord] = field(default_factory=list)


def start_after(
    domain: Domain[State], records: list[ArchiveRecord], problem: Callable[[str], None]
) -> Start[State]:
    """The last archive's end (``records``: the journal's), or the beginning if none."""
    if not records:
        return Start(domain.empty())
    last = records[-1]
    try:
        state = domain.state_from_text(last.state)
    except ValueError as error:
        problem(f"archive {last.segment}: the state it recorded cannot be read: {error}")
        state = domain.empty()
    return Start(state, last.last_seq, last.last_hash, records)


def segment_rows(
    directory: Path,
    records: Sequence[ArchiveRecord],
    keys: Sequence[str],
    problem: Callable[[str], None],
) -> Iterator[Row | Cut | Resume]:
    """Every archived row, segment after segment, each followed by a :class:`Cut` (or Resume)."""
    for record in records:
        path = directory / record.segment
        where = f"segment {record.segment}"
        if not path.is_file():
            problem(
                f"{where} (rows {record.first_seq} to {record.last_seq}) is missing from "
                f"{directory}: those rows are not verified"
            )
            yield Resume(record)
            continue
        if file_sha256(path) != record.sha256:
            problem(
                f"{where}: its SHA-256 is not the one recorded when it was archived: the file "
                "was changed or is another segment"
            )
        reader = SegmentReader(path)
        try:
            rows = reader.rows()
            first = next(rows, None)
            if (reader.first_seq, reader.prev_hash) != (record.first_seq, record.prev_hash):
                _misplaced(reader, rows, record, problem)
                yield Resume(record)
                continue
            for values in itertools.chain([first] if first is not None else [], rows):
                yield Row(values, None, None)
        except SegmentError as error:
            problem(f"{error}: rows {record.first_seq} to {record.last_seq} are not verified")
            yield Resume(record)
            continue
        for found in reader.problems or ():
            problem(found)
        _check_seal(reader, record, problem)
        _check_sealed(reader, record, keys, problem)
        yield Cut(record)


def _misplaced(
    reader: SegmentReader,
    rows: Iterator[dict[str, Any]],
    record: ArchiveRecord,
    problem: Callable[[str], None],
) -> None:
    """A segment that does not start where its record does: say what it holds, replay none."""
    for _ in rows:
        pass
    last = reader.trailer.last_seq if reader.trailer is not None else "?"
    where = f"segment {record.segment}"
    if reader.first_seq != record.first_seq:
        problem(
            f"{where}: holds rows {reader.first_seq} to {last}, the journal archived rows "
            f"{record.first_seq} to {record.last_seq} under that name"
        )
    else:
        problem(f"{where}: does not start from the hash the journal recorded before it")


def _check_seal(
    reader: SegmentReader, record: ArchiveRecord, problem: Callable[[str], None]
) -> None:
    """The segment's trailer against the journal's record of it."""
    where = f"segment {record.segment}"
    trailer = reader.trailer
    if trailer is not None and trailer.last_seq != record.last_seq:
        problem(
            f"{where}: holds rows {record.first_seq} to {trailer.last_seq}, the journal "
            f"archived rows {record.first_seq} to {record.last_seq} under that name"
        )
    if trailer is not None and (trailer.last_hash, trailer.rows) != (record.last_hash, record.rows):
        problem(f"{where}: its trailer does not state the last hash and rows the journal recorded")


def check_cut(
    domain: Domain[State],
    cut: Cut,
    replayed: tuple[int, str, State],
    problem: Callable[[str], None],
) -> None:
    """At a segment's end: the replay's row, hash and state are what the record keeps."""
    record, (seq, last_hash, state) = cut.record, replayed
    where = f"archive {record.segment}"
    if (seq, last_hash) != (record.last_seq, record.last_hash):
        problem(
            f"{where}: the replay ends at row {seq} with the hash {last_hash[:16]}..., the "
            f"journal recorded row {record.last_seq} with {record.last_hash[:16]}..."
        )
    if domain.state_digest(state) != text_digest(record.state):
        shown = "; ".join(domain.differences(domain.state_from_text(record.state), state)[:3])
        problem(f"{where}: the state it recorded is not the replay's at row {seq} ({shown})")


def _check_sealed(
    reader: SegmentReader,
    record: ArchiveRecord,
    keys: Sequence[str],
    problem: Callable[[str], None],
) -> None:
    """The checkpoint sealed in a segment's trailer states its cut; signed, given the keys."""
    where = f"segment {record.segment}"
    sealed = reader.trailer.checkpoint if reader.trailer is not None else None
    if sealed is None:
        if record.checkpoint_seq is not None:
            problem(f"{where}: the checkpoint of its cut is not sealed in it")
        return
    event = checkpoint_of(sealed)
    if event is None:
        problem(f"{where}: its sealed checkpoint is not a checkpoint")
        return
    stated = (event.head_seq, event.head_hash, event.state_digest)
    if stated != (record.last_seq, record.last_hash, text_digest(record.state)):
        problem(f"{where}: its sealed checkpoint does not state its last row and state")
    if keys and signature_holds(event, keys) is not True:
        problem(f"{where}: its sealed checkpoint is not signed by a controller key given")


def segment_checkpoints(
    directory: Path, records: Sequence[ArchiveRecord]
) -> dict[int, CheckpointRecorded]:
    """The checkpoint rows the readable segments hold, by row (problems are found later)."""
    found: dict[int, CheckpointRecorded] = {}
    for record in records:
        path = directory / record.segment
        if not path.is_file():
            continue
        try:
            for values in SegmentReader(path).rows():
                if values["kind"] == KIND:
                    event = checkpoint_of(str(values["event"]))
                    if event is not None:
                        found[int(values["seq"])] = event
        except SegmentError:
            continue
    return found


def carried_payouts(domain: Domain[State], state: State) -> dict[str, dict[str, Any]]:
    """The payouts pending at the cut, which stay in the live ``payouts`` table.

    Their row and time are those of archived rows: compared on what the payout itself holds.
    """
    return {
        payout_id: row | {"verified_by": None, "verified_seq": None}
        for payout_id, row in domain.pending_rows(state).items()
    }


def carried_matches(expected: dict[str, Any], stored: dict[str, Any] | None, cut: int) -> bool:
    """Whether a stored payout is the pending one carried over the cut (see above)."""
    if stored is None or int(stored["seq"]) > cut:
        return False
    return all(stored.get(name) == value for name, value in expected.items())
