"""One verification of a journal, whichever backend reads it: live rows, tables and segments.

:func:`controller.journal.sqlite.verify.verify` (the SQLite file) and
:func:`controller.journal.postgres.checks.verify` (a PostgreSQL database) run the same
:class:`Verification` on what they read in one snapshot (:class:`LiveJournal`): the chain and
the replay of every row (:func:`~controller.journal.sqlite.verify.check_link`,
:func:`~controller.journal.sqlite.verify.replay_row`), from empty or from the last archive's cut, or
through the archive segments first when their folder is given
(:mod:`controller.journal.archive_check`); the materialized state, the payouts and the outbox
of site messages (:mod:`controller.journal.site_messages`); the checkpoints, the snapshots
and the anchors (docs/journal.md, "Verification" and "Archives").
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from controller.journal.anchors import check_anchor
from controller.journal.archive_check import (
    Cut,
    Resume,
    Start,
    carried_matches,
    carried_payouts,
    check_cut,
    segment_checkpoints,
    segment_rows,
    start_after,
)
from controller.journal.checkpoint_audit import (
    VERIFIED,
    AtHead,
    at_head,
    audit,
    audit_snapshots,
    checkpoints_in,
)
from controller.journal.domain import RecordedState, State
from controller.journal.provenance import writers
from controller.journal.row_checks import PROGRESS_ROWS, VerifyReport, check_link, replay_row
from controller.journal.site_messages import QueuedMessages
from controller.mystery.core import drawn_signature_holds
from controller.mystery_events import MysteryDrawn

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from pathlib import Path

    from controller.events import CheckpointRecorded
    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain
    from controller.journal.row_checks import Payouts
    from controller.journal.rows import Row
    from controller.journal.site_messages import Outboxed


_Replayed_contra = TypeVar("_Replayed_contra", bound=RecordedState, contravariant=True)


class LiveJournal(Protocol[_Replayed_contra]):
    """What verification reads of a journal, all in one snapshot: its records, rows, tables.

    The SQLite file's (:class:`_FileRows`) and the PostgreSQL database's
    (:mod:`controller.journal.postgres.checks`): one verification, two ways to read.
    """

    def archive_records(self) -> list[ArchiveRecord]:
        """The archive segments the journal records, in order."""
        ...

    def count(self, *, after: int = 0, upto: int | None = None) -> int:
        """The journal rows after row ``after``, up to row ``upto`` if given."""
        ...

    def rows(self, after: int) -> Iterator[Row]:
        """Every row after row ``after``, in order, canonical."""
        ...

    def checkpoint_rows(self) -> Iterable[Row]:
        """The checkpoint rows, in order."""
        ...

    def compare_state(self, replayed: _Replayed_contra, report: VerifyReport) -> None:
        """The materialized state against the replay, each pool's money added up."""
        ...

    def payouts(self) -> dict[str, dict[str, Any]]:
        """The ``payouts`` table's rows by payout id, as :func:`payout_columns` names them."""
        ...

    def snapshots(self) -> list[StoredSnapshot]:
        """The checkpoints' stored snapshots."""
        ...

    def site_messages(self) -> list[Outboxed] | None:
        """The ``site_messages`` rows in order; None in a schema before the table."""
        ...


@dataclass(slots=True)
class Verification(Generic[State]):
    """One verification of a journal's live rows and tables, and of its segments if given.

    ``domain`` replays the rows (:class:`controller.journal.domain.Domain`).
    """

    live: LiveJournal[State]
    domain: Domain[State]
    keys: Sequence[str]
    anchors: Sequence[Anchor]
    progress: Callable[[int, int], None]
    every: int = PROGRESS_ROWS
    """Rows between two calls of ``progress``."""
    report: VerifyReport = field(default_factory=VerifyReport)
    payouts: Payouts = field(default_factory=dict)
    carried: Payouts = field(default_factory=dict)
    """Payouts pending at a cut whose rows were not replayed (:func:`.carried_payouts`)."""
    carried_cut: int = 0
    """The last such cut: the carried payouts were made by rows up to it."""
    queued: QueuedMessages = field(default_factory=QueuedMessages)
    """The site messages the replayed rows queued (:mod:`.site_messages`)."""
    at_heads: dict[int, AtHead] = field(default_factory=dict)
    """The replayed state's digest and meters at each row a checkpoint covers."""
    hashes: dict[int, str] = field(default_factory=dict)
    """The hash of each row a checkpoint or an anchor names, and of the last."""

    def run(self, archives: Path | None) -> VerifyReport:
        """Every check (the module docstring); ``archives``: the folder of the segments."""
        report, journal = self.report, self.live
        report.keys, report.anchors = len(self.keys), len(self.anchors)
        start = start_after(self.domain, journal.archive_records(), report.problem)
        report.archived, report.segments = start.seq, len(start.records)
        live = journal.count(after=start.seq)
        # The checkpoints first (a scan of one column), so that the rows they cover are known
        # when the replay passes them: only those rows' hashes and states are kept.
        checkpoints = checkpoints_in(row.values for row in journal.checkpoint_rows())
        rows: Iterable[Row | Cut | Resume]
        if archives is not None and start.records:
            report.segments_checked = True
            checkpoints |= segment_checkpoints(archives, start.records)
            total = live + sum(record.rows for record in start.records)
            rows = itertools.chain(
                segment_rows(archives, start.records, self.keys, report.problem),
                journal.rows(start.seq),
            )
            begin = Start(self.domain.empty())
        else:
            checkpoints = self._covering_live_rows(checkpoints, start)
            total, rows, begin = live, journal.rows(start.seq), start
            self.carried, self.carried_cut = carried_payouts(self.domain, start.state), start.seq
            self.payouts = dict(self.carried)  # a verification since the cut updates them
            self._left_in_cut(start.seq)
            self.queued.skipped(1, start.seq)
        state = self._replay(rows, begin, checkpoints, total)
        self._compare(state)
        self._audit(checkpoints, begin)
        return report

    def _covering_live_rows(
        self, checkpoints: dict[int, CheckpointRecorded], start: Start[State]
    ) -> dict[int, CheckpointRecorded]:
        """Without the segments, the checkpoints of rows archived before the cut are not checked."""
        kept = {}
        for row, event in checkpoints.items():
            if event.head_seq < start.seq:
                self.report.skip(
                    f"row {row}: its checkpoint covers row {event.head_seq}, which is archived: "
                    "checked with the segments (--archives DIR)"
                )
            else:
                kept[row] = event
        return kept

    def _replay(
        self,
        rows: Iterable[Row | Cut | Resume],
        begin: Start[State],
        checkpoints: dict[int, CheckpointRecorded],
        total: int,
    ) -> State:
        """Check and replay every row; keep what the checkpoints and anchors ask for."""
        report = self.report
        wanted = {event.head_seq for event in checkpoints.values()}
        kept = wanted | {anchor.seq for anchor in self.anchors}
        expected, previous, state = begin.seq, begin.hash, begin.state
        if expected in wanted:
            self.at_heads[expected] = at_head(self.domain, state)
        if expected:
            self.hashes[expected] = previous
        done = 0
        for read in rows:
            if isinstance(read, Resume):
                record = read.record
                expected, previous = record.last_seq, record.last_hash
                state = self.domain.state_from_text(record.state)
                self._at_cut(state)
                self._carry(state, record.last_seq)
                self.queued.skipped(record.first_seq, record.last_seq)
                if expected in kept:
                    self.hashes[expected] = previous
                if expected in wanted:
                    self.at_heads[expected] = at_head(self.domain, state)
                continue
            if isinstance(read, Cut):
                check_cut(self.domain, read, (expected, previous, state), report.problem)
                self._at_cut(state)
                continue
            row = read.values
            if read.form:
                report.problem(f"row {row['seq']}: {read.form}")
            expected += 1
            check_link(row, expected, previous, report)
            previous = str(row["hash"])
            writers(self.domain, state, read, report)  # as the append found it: before the row
            state = replay_row(self.domain, state, row, report, self.payouts, read.event)
            self._check_draw(row, read)
            seq = int(row["seq"])
            self.queued.note(read)
            report.head = (seq, previous)
            if seq in kept:
                self.hashes[seq] = previous
            if seq in wanted:
                self.at_heads[seq] = at_head(self.domain, state)
            done += 1
            if done % self.every == 0 and done < total:
                self.progress(done, total)
        self.progress(done, total)
        report.rows = done
        if done:
            self.hashes[report.head[0]] = report.head[1]
        return state

    def _check_draw(self, row: dict[str, Any], read: Row) -> None:
        """A mystery draw's statement is the controller key's (docs/rules.md § 10, check 1)."""
        if self.keys and isinstance(read.event, MysteryDrawn):
            unsigned = drawn_signature_holds(read.event.drawn, self.keys)
            if unsigned is not None:
                self.report.problem(f"row {row['seq']}: mystery draw: {unsigned}")

    def _left_in_cut(self, cut: int) -> None:
        """No journal row of an archived range may be left in the file: nothing reads it."""
        left = self.live.count(upto=cut)
        if left:
            self.report.problem(
                f"the file holds {left} rows of the archived rows 1 to {cut}, which an archive "
                "removes with its record: they were put back"
            )

    def _at_cut(self, state: State) -> None:
        """At an archive's cut, only the payouts pending then stay in the live table."""
        self.payouts = {key: row for key, row in self.payouts.items() if key in state.pending}
        self.carried = {key: row for key, row in self.carried.items() if key in state.pending}

    def _carry(self, state: State, cut: int) -> None:
        """After a segment not read, the payouts pending at its cut, as its record has them."""
        found = carried_payouts(self.domain, state)
        self.carried |= {key: row for key, row in found.items() if key not in self.payouts}
        self.payouts = found | self.payouts  # those the replay made, as it made them
        self.carried_cut = cut

    def _compare(self, state: State) -> None:
        """The materialized state and the payouts against the replay."""
        report = self.report
        self.live.compare_state(state, report)
        stored = self.live.payouts()
        expected = self.payouts
        for payout_id in sorted(expected.keys() | stored.keys()):
            if payout_id in self.carried:
                holds = carried_matches(
                    expected[payout_id], stored.get(payout_id), self.carried_cut
                )
            else:
                holds = expected.get(payout_id) == stored.get(payout_id)
            if not holds:
                report.problem(f"payout {payout_id}: the stored payout differs from the replay")
        stored_messages = self.live.site_messages()
        self.queued.compare(stored_messages, state.chain, report.problem, report.notes.append)

    def _audit(self, checkpoints: dict[int, CheckpointRecorded], begin: Start[State]) -> None:
        """The checkpoints, the snapshots and the anchors."""
        report = self.report
        report.checkpoints = audit(
            checkpoints, self.at_heads, self.hashes, keys=self.keys, problem=report.problem
        )
        audit_snapshots(self.live.snapshots(), checkpoints, report.problem)
        unchecked = begin.seq if not report.segments_checked else 0
        if (
            unchecked
            and self.keys
            and not any(
                summary.head_seq == unchecked and summary.signature == VERIFIED
                for summary in report.checkpoints
            )
        ):
            report.problem(
                f"rows 1 to {unchecked} are archived and no checkpoint signed by a controller "
                "key given covers the last of them: verify with the segments (--archives DIR)"
            )
        for anchor in self.anchors:
            if 0 < anchor.seq < unchecked:
                report.problem(
                    f"anchor {anchor.where}: row {anchor.seq} is archived (rows 1 to "
                    f"{unchecked}): verify with the segments (--archives DIR) to check it"
                )
                continue
            for problem in check_anchor(anchor, report.head[0], self.hashes.get, self.keys):
                report.problem(problem)
