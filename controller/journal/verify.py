"""``jackpotd verify``: check the hash chain and replay the journal from empty.

Three checks, each row in order:

1. **Chain**: sequence numbers run 1, 2, 3, ... with no gap; each row's ``prev_hash`` is the
   hash of the row before; each row's ``hash`` is what its fields hash to.
2. **Replay**: the stored event, applied to the state rebuilt so far, gives exactly the stored
   outcome, reason and effects.
3. **State**: the state rebuilt from the whole journal equals the materialized state (pools to
   the fraction of a cent, tables, open rounds, pending payouts, configuration revision), and
   every pool's money adds up (money in = meter + reserve + overflow + paid); every payout and
   every site message of the outbox to central is the one the rows' effects made.

Then the controller's **checkpoints** (:mod:`controller.journal.checkpoint_audit`): each states
the hash of a row before it and the replayed state there, and, given the controller's public
keys, its signature verifies. And the **anchors** (:mod:`controller.journal.anchors`): each
saved head is in the chain, or this is not the history that was anchored. The report gives
the head (the last row and its hash), to be kept as an anchor.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import sqlite_utils

from controller.effects import AnyEffect, PayoutMade, Verified, encode_effects
from controller.events import decode_event, encode_event
from controller.journal.archive import archive_records
from controller.journal.chain import GENESIS, row_hash
from controller.journal.checkpoint_audit import VERIFIED
from controller.journal.checkpoints import KIND, stored_snapshots
from controller.journal.errors import JournalError
from controller.journal.provenance import with_provenance
from controller.journal.read_only_file import open_read_only
from controller.journal.restore import load_state
from controller.journal.rows import Row, provenances, read_rows, rows_of_kinds
from controller.journal.site_messages import stored_messages
from controller.journal.store import payout_columns
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.codec import pool_json, table_state_json, wagers_json
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from controller.events import AnyEvent
    from controller.journal.anchors import Anchor
    from controller.journal.archive import ArchiveRecord
    from controller.journal.checkpoint_audit import CheckpointSummary
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.site_messages import Outboxed

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
    skipped: list[str] = field(default_factory=list)
    """The checks of checkpoints and anchors left out, and why (also among ``notes``)."""
    writers: dict[str, int] = field(default_factory=dict)
    """Rows by who journaled them (:func:`~controller.journal.provenance.writer_of`)."""

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.problems

    @property
    def signatures_checked(self) -> int:
        """Checkpoints whose signature verified under a controller key given."""
        return sum(1 for summary in self.checkpoints if summary.signature == VERIFIED)

    def unchecked(self) -> list[str]:
        """What this verification did not prove, plainly: ``verify --strict`` fails on any.

        Without a checkpoint signature checked, the chain and the replay prove only that the
        journal is consistent, not that the controller wrote it: anyone who can write the file
        can rebuild a chain that passes (docs/security.md, section 2.3).
        """
        said = []
        if not self.signatures_checked:
            if not self.keys:
                why = "no controller public key given (--controller-key FILE or --anchor FILE)"
            else:
                why = "the rows verified hold no checkpoint"
            said.append(f"no checkpoint signature was checked: {why}")
        return said + self.skipped

    def skip(self, text: str) -> None:
        """Record a check of a checkpoint or anchor left out (a note, not a failure)."""
        self.notes.append(text)
        self.skipped.append(text)

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
    A file with no rows in a WAL is read immutable instead, and refused if it changed while it
    was read (:mod:`controller.journal.read_only_file`).
    """
    location = Path(path)
    opened = open_read_only(location)  # nothing made beside the file (read_only_file)
    connection = opened.connection
    if archives is not None and not archives.is_dir():
        connection.close()
        raise JournalError(f"{archives}: no such folder of archive segments")
    connection.row_factory = sqlite3.Row
    try:
        connection.execute("BEGIN")
        # Imported here: the verification imports this module's checks of a row.
        from controller.journal.verification import Verification  # noqa: PLC0415

        live = _FileRows(connection)
        every = PROGRESS_ROWS  # read now: a test sets it lower
        report = Verification(live, keys, anchors, progress or _silent, every).run(archives)
    except sqlite3.Error as error:
        opened.check_unchanged()  # a file changed under an immutable read: that is why
        raise JournalError(f"{location}: cannot read the journal: {error}") from error
    else:
        opened.check_unchanged()  # in the read transaction still: closed below
        return report
    finally:
        connection.close()  # ends the read transaction


def _silent(done: int, total: int) -> None:
    """No progress shown."""


@dataclass(frozen=True, slots=True)
class _FileRows:
    """An SQLite journal file, read in the read transaction :func:`verify` opened."""

    connection: sqlite3.Connection

    def archive_records(self) -> list[ArchiveRecord]:
        return archive_records(self.connection)

    def count(self, *, after: int = 0, upto: int | None = None) -> int:
        query = "SELECT count(*) FROM journal WHERE seq > ? AND seq <= ?"
        bound = upto if upto is not None else 2**63 - 1
        return int(self.connection.execute(query, [after, bound]).fetchone()[0])

    def rows(self, after: int) -> Iterator[Row]:
        return with_provenance(
            read_rows(self.connection, after), provenances(self.connection, after)
        )

    def checkpoint_rows(self) -> Iterable[Row]:
        return rows_of_kinds(self.connection, KIND)

    def compare_state(self, replayed: LedgerState, report: VerifyReport) -> None:
        try:
            stored_state = load_state(sqlite_utils.Database(self.connection))
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
            report.problem(f"the materialized state cannot be read: {error}")
        else:
            _compare_state(replayed, stored_state, report)

    def payouts(self) -> dict[str, dict[str, Any]]:
        found = self.connection.execute("SELECT * FROM payouts")
        return {row["payout_id"]: dict(row) for row in found}

    def snapshots(self) -> list[StoredSnapshot]:
        try:
            return stored_snapshots(self.connection)
        except sqlite3.OperationalError:  # a journal of a schema before snapshots
            return []

    def site_messages(self) -> list[Outboxed] | None:
        return stored_messages(self.connection)
