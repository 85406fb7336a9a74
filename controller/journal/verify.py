"""``jackpotd verify``: check the hash chain and replay the journal from empty.

Three checks, each row in order:

1. **Chain**: sequence numbers run 1, 2, 3, ... with no gap; each row's ``prev_hash`` is the
   hash of the row before; each row's ``hash`` is what its fields hash to.
2. **Replay**: the stored event, applied to the state rebuilt so far, gives exactly the stored
   outcome, reason and effects.
3. **State**: the state rebuilt from the whole journal equals the materialized state (pools to
   the fraction of a cent, tables, open rounds, pending payouts, configuration revision), and
   every pool's money adds up (money in = meter + reserve + overflow + paid).

Then the controller's **checkpoints** (:mod:`controller.journal.checkpoint_audit`): each states
the hash of a row before it and the replayed state there, and, given the controller's public
keys, its signature verifies. And the **anchors** (:mod:`controller.journal.anchors`): each
saved head is in the chain, or this is not the history that was anchored. The report gives
the head (the last row and its hash), to be kept as an anchor.
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import sqlite_utils

from controller.effects import AnyEffect, PayoutMade, Verified, encode_effects
from controller.events import decode_event, encode_event
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
from controller.journal.chain import GENESIS, row_hash
from controller.journal.checkpoint_audit import (
    VERIFIED,
    AtHead,
    CheckpointSummary,
    at_head,
    audit,
    audit_snapshots,
    checkpoints_in,
)
from controller.journal.checkpoints import KIND
from controller.journal.codec import pool_json, table_state_json, wagers_json
from controller.journal.errors import JournalError
from controller.journal.restore import load_state
from controller.journal.rows import Row, read_rows, rows_of_kinds
from controller.journal.snapshot import state_from_text
from controller.journal.store import payout_columns
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from controller.events import AnyEvent, CheckpointRecorded
    from controller.journal.anchors import Anchor

MAX_PROBLEMS: Final = 20


@dataclass(slots=True)
class VerifyReport:
    """What verification found."""

    rows: int = 0
    pools: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    head: tuple[int, str] = (0, GENESIS)
    """The last row and its hash: what to keep off the box as an anchor."""
    checkpoints: list[CheckpointSummary] = field(default_factory=list)
    keys: int = 0
    """Controller public keys the checkpoints' signatures were checked with."""
    anchors: int = 0
    """Saved heads checked."""
    archived: int = 0
    """The last row moved out to an archive segment (0: none): rows 1 to it are archived."""
    segments: int = 0
    """Archive segments the journal records."""
    segments_checked: bool = False
    """Whether the segments were verified with the live rows (``archives`` given)."""
    notes: list[str] = field(default_factory=list)
    """What was not checked, and why (not a failure)."""

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.problems

    def problem(self, text: str) -> None:
        """Record a problem (the first few are kept)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)


Payouts = dict[str, dict[str, object]]


def _expect_payouts(
    payouts: Payouts, row: dict[str, object], effects: tuple[AnyEffect, ...]
) -> None:
    """What the ``payouts`` table must hold after this row, by the replayed effects."""
    seq = int(str(row["seq"]))
    for effect in effects:
        if isinstance(effect, PayoutMade):
            payouts[effect.payout_id] = payout_columns(effect, seq, str(row["at"]))
        elif isinstance(effect, Verified) and effect.payout_id in payouts:
            payouts[effect.payout_id] |= {
                "status": "paid",
                "verified_by": effect.by,
                "verified_seq": seq,
            }


def replay_row(
    state: LedgerState,
    row: dict[str, object],
    report: VerifyReport,
    payouts: Payouts,
    event: AnyEvent | None = None,
) -> LedgerState:
    """The state after one journal row, whose outcome and effects the replay must give.

    ``event``: the row's event, if it was decoded already.
    """
    seq = row["seq"]
    if event is None:
        try:
            event = decode_event(str(row["event"]))
        except msgspec.MsgspecError as error:
            report.problem(f"row {seq}: the stored event does not decode: {error}")
            return state
    if event.event_id != row["event_id"] or encode_event(event).decode() != row["event"]:
        report.problem(f"row {seq}: the event's id or text differs from the row")
    try:
        new_state, effects = apply(state, event)
        outcome, reason = APPLIED, ""
    except LedgerError as error:
        new_state, effects, outcome, reason = state, (), REJECTED, str(error)
    if (outcome, reason) != (row["outcome"], row["reason"]):
        report.problem(
            f"row {seq}: replay gives {outcome} {reason!r}, the journal says "
            f"{row['outcome']} {row['reason']!r}"
        )
    if encode_effects(effects).decode() != row["effects"]:
        report.problem(f"row {seq}: replay gives other effects than the journal records")
    _expect_payouts(payouts, row, effects)
    return new_state


def _compare_state(replayed: LedgerState, stored: LedgerState, report: VerifyReport) -> None:
    for pool_id in sorted(replayed.pools.keys() | stored.pools.keys()):
        ours, theirs = replayed.pools.get(pool_id), stored.pools.get(pool_id)
        if ours is None or theirs is None or pool_json(ours) != pool_json(theirs):
            report.problem(f"pool {pool_id}: the stored meters differ from the replay")
        if ours is not None:
            report.pools[pool_id] = ours.meter_cents
            if ours.money_in() != ours.money_held_or_paid():
                report.problem(f"pool {pool_id}: money in does not equal money held or paid")
    if replayed.table_events != stored.table_events:
        report.problem("tables: the stored configuration differs from the replay")
    ours_live = {key: table_state_json(value) for key, value in replayed.table_states.items()}
    theirs_live = {key: table_state_json(value) for key, value in stored.table_states.items()}
    if ours_live != theirs_live:
        report.problem("tables: the stored live table states differ from the replay")
    ours_rounds = {key: wagers_json(w) for key, w in replayed.rounds.items()}
    theirs_rounds = {key: wagers_json(w) for key, w in stored.rounds.items()}
    if ours_rounds != theirs_rounds:
        report.problem("rounds: the stored open rounds differ from the replay")
    if replayed.pending.keys() != stored.pending.keys():
        report.problem("payouts: the stored pending payouts differ from the replay")
    if replayed.manifest != stored.manifest:
        report.problem("manifest: the stored approved manifest differs from the replay")
    if dict(replayed.operators) != dict(stored.operators):
        report.problem("operators: the stored operators differ from the replay")
    if replayed.revision != stored.revision:
        report.problem(
            f"configuration revision: replay gives {replayed.revision}, stored {stored.revision}"
        )


def check_link(row: dict[str, Any], expected: int, previous: str, report: VerifyReport) -> None:
    """The row's place in the chain: its number, the hash before it and its own."""
    if row["seq"] != expected:
        report.problem(f"row {row['seq']}: expected row {expected}; rows are missing")
    if row["prev_hash"] != previous:
        report.problem(f"row {row['seq']}: the chain is broken (previous hash differs)")
    if row_hash(row["prev_hash"], row) != row["hash"]:
        report.problem(f"row {row['seq']}: the row's contents do not match its hash")


PROGRESS_ROWS: Final = 5_000
"""Rows between two calls of ``verify``'s ``progress``."""


def verify(
    path: Path | str,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
) -> VerifyReport:
    """Check a journal file; raises :class:`JournalError` if it cannot be read at all.

    ``keys``: the controller's public keys (base64) to check the checkpoints' signatures with;
    ``anchors``: saved heads that must be in the chain; ``progress``: called every
    :data:`PROGRESS_ROWS` rows and once at the end, with the rows checked and the rows in all;
    ``archives``: the folder of the journal's archive segments, checked with the live rows as
    one chain replayed from empty (:mod:`controller.journal.archive_check`; without it, an
    archived journal is verified from the state and hash its last archive recorded).

    Every read of the file runs in one read transaction: in WAL mode it sees the file as it
    was at its first read until it ends, so the rows, the materialized state and the payouts
    are those of one moment even while the service commits (docs/journal.md, "Verification").
    """
    location = Path(path)
    if not location.exists():
        raise JournalError(f"{location}: no such journal")
    if archives is not None and not archives.is_dir():
        raise JournalError(f"{archives}: no such folder of archive segments")
    try:
        connection = sqlite3.connect(f"file:{location}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as error:
        raise JournalError(f"{location}: cannot read the journal: {error}") from error
    connection.row_factory = sqlite3.Row
    try:
        connection.execute("BEGIN")
        return _Verification(connection, keys, anchors, progress or _silent).run(archives)
    except sqlite3.Error as error:
        raise JournalError(f"{location}: cannot read the journal: {error}") from error
    finally:
        connection.close()  # ends the read transaction


def _silent(done: int, total: int) -> None:
    """No progress shown."""


@dataclass(slots=True)
class _Verification:
    """:func:`verify` inside its read transaction."""

    connection: sqlite3.Connection
    keys: Sequence[str]
    anchors: Sequence[Anchor]
    progress: Callable[[int, int], None]
    report: VerifyReport = field(default_factory=VerifyReport)
    payouts: Payouts = field(default_factory=dict)
    carried: Payouts = field(default_factory=dict)
    """Payouts pending at the cut, when verifying from it (:func:`.carried_payouts`)."""
    at_heads: dict[int, AtHead] = field(default_factory=dict)
    """The replayed state's digest and meters at each row a checkpoint covers."""
    hashes: dict[int, str] = field(default_factory=dict)
    """The hash of each row a checkpoint or an anchor names, and of the last."""

    def run(self, archives: Path | None) -> VerifyReport:
        report, connection = self.report, self.connection
        report.keys, report.anchors = len(self.keys), len(self.anchors)
        start = start_after(connection, report.problem)
        report.archived, report.segments = start.seq, len(start.records)
        live = int(
            connection.execute(
                "SELECT count(*) FROM journal WHERE seq > ?", [start.seq]
            ).fetchone()[0]
        )
        # The checkpoints first (a scan of one column), so that the rows they cover are known
        # when the replay passes them: only those rows' hashes and states are kept.
        checkpoints = checkpoints_in(row.values for row in rows_of_kinds(connection, KIND))
        rows: Iterable[Row | Cut | Resume]
        if archives is not None and start.records:
            report.segments_checked = True
            checkpoints |= segment_checkpoints(archives, start.records)
            total = live + sum(record.rows for record in start.records)
            rows = itertools.chain(
                segment_rows(archives, start.records, self.keys, report.problem),
                read_rows(connection, start.seq),
            )
            begin = Start()
        else:
            checkpoints = self._covering_live_rows(checkpoints, start)
            total, rows, begin = live, read_rows(connection, start.seq), start
            self.carried = carried_payouts(start.state)
            self.payouts = dict(self.carried)  # a verification since the cut updates them
            self._left_in_cut(start.seq)
        state = self._replay(rows, begin, checkpoints, total)
        self._compare(state, start.seq if begin is start else 0)
        self._audit(checkpoints, begin)
        return report

    def _covering_live_rows(
        self, checkpoints: dict[int, CheckpointRecorded], start: Start
    ) -> dict[int, CheckpointRecorded]:
        """Without the segments, the checkpoints of rows archived before the cut are not checked."""
        kept = {}
        for row, event in checkpoints.items():
            if event.head_seq < start.seq:
                self.report.notes.append(
                    f"row {row}: its checkpoint covers row {event.head_seq}, which is archived: "
                    "checked with the segments (--archives DIR)"
                )
            else:
                kept[row] = event
        return kept

    def _replay(
        self,
        rows: Iterable[Row | Cut | Resume],
        begin: Start,
        checkpoints: dict[int, CheckpointRecorded],
        total: int,
    ) -> LedgerState:
        """Check and replay every row; keep what the checkpoints and anchors ask for."""
        report = self.report
        wanted = {event.head_seq for event in checkpoints.values()}
        kept = wanted | {anchor.seq for anchor in self.anchors}
        expected, previous, state = begin.seq, begin.hash, begin.state
        if expected in wanted:
            self.at_heads[expected] = at_head(state)
        if expected:
            self.hashes[expected] = previous
        done = 0
        for read in rows:
            if isinstance(read, Resume):
                record = read.record
                expected, previous = record.last_seq, record.last_hash
                state = state_from_text(record.state)
                self._at_cut(state)
                if expected in kept:
                    self.hashes[expected] = previous
                if expected in wanted:
                    self.at_heads[expected] = at_head(state)
                continue
            if isinstance(read, Cut):
                check_cut(read, (expected, previous, state), report.problem)
                self._at_cut(state)
                continue
            row = read.values
            if read.form:
                report.problem(f"row {row['seq']}: {read.form}")
            expected += 1
            check_link(row, expected, previous, report)
            previous = str(row["hash"])
            state = replay_row(state, row, report, self.payouts, read.event)
            seq = int(row["seq"])
            report.head = (seq, previous)
            if seq in kept:
                self.hashes[seq] = previous
            if seq in wanted:
                self.at_heads[seq] = at_head(state)
            done += 1
            if done % PROGRESS_ROWS == 0 and done < total:
                self.progress(done, total)
        self.progress(done, total)
        report.rows = done
        if done:
            self.hashes[report.head[0]] = report.head[1]
        return state

    def _left_in_cut(self, cut: int) -> None:
        """No journal row of an archived range may be left in the file: nothing reads it."""
        query = "SELECT count(*) FROM journal WHERE seq <= ?"
        left = int(self.connection.execute(query, [cut]).fetchone()[0])
        if left:
            self.report.problem(
                f"the file holds {left} rows of the archived rows 1 to {cut}, which an archive "
                "removes with its record: they were put back"
            )

    def _at_cut(self, state: LedgerState) -> None:
        """At an archive's cut, only the payouts pending then stay in the live table."""
        self.payouts = {key: row for key, row in self.payouts.items() if key in state.pending}

    def _compare(self, state: LedgerState, cut: int) -> None:
        """The materialized state and the payouts against the replay."""
        report, connection = self.report, self.connection
        try:
            stored_state = load_state(sqlite_utils.Database(connection))
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
            report.problem(f"the materialized state cannot be read: {error}")
        else:
            _compare_state(state, stored_state, report)
        stored = {
            row["payout_id"]: dict(row) for row in connection.execute("SELECT * FROM payouts")
        }
        expected = self.payouts
        for payout_id in sorted(expected.keys() | stored.keys()):
            if payout_id in self.carried:
                holds = carried_matches(expected[payout_id], stored.get(payout_id), cut)
            else:
                holds = expected.get(payout_id) == stored.get(payout_id)
            if not holds:
                report.problem(f"payout {payout_id}: the stored payout differs from the replay")

    def _audit(self, checkpoints: dict[int, CheckpointRecorded], begin: Start) -> None:
        """The checkpoints, the snapshots and the anchors."""
        report = self.report
        report.checkpoints = audit(
            checkpoints, self.at_heads, self.hashes, keys=self.keys, problem=report.problem
        )
        audit_snapshots(self.connection, checkpoints, report.problem)
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
