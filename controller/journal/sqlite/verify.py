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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic

import msgspec
import sqlite_utils

from controller.journal.checkpoints import KIND
from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.provenance import with_provenance
from controller.journal.row_checks import (
    PROGRESS_ROWS,
    Payouts,
    VerifyReport,
    check_link,
    replay_row,
)
from controller.journal.sqlite.archive_records import archive_records
from controller.journal.sqlite.checkpoints import stored_snapshots
from controller.journal.sqlite.read_only_file import open_read_only
from controller.journal.sqlite.restore import load_state
from controller.journal.sqlite.rows import provenances, read_rows, rows_of_kinds
from controller.journal.sqlite.site_messages import stored_messages
from controller.journal.verification import Verification

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain
    from controller.journal.rows import Row
    from controller.journal.site_messages import Outboxed

__all__ = ["PROGRESS_ROWS", "Payouts", "VerifyReport", "check_link", "replay_row", "verify"]


def verify(  # noqa: PLR0913 - the journal, the command's options, its domain
    path: Path | str,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
    domain: Domain[State],
) -> VerifyReport:
    """Check a journal file; raises :class:`JournalError` if it cannot be read at all.

    ``keys``: the controller's public keys (base64) to check the checkpoints' signatures with;
    ``anchors``: saved heads that must be in the chain; ``progress``: called every
    :data:`PROGRESS_ROWS` rows and once at the end, with the rows checked and the rows in all;
    ``archives``: the folder of the journal's archive segments, checked with the live rows as
    one chain replayed from empty (:mod:`controller.journal.archive_check`; without it, an
    archived journal is verified from the state and hash its last archive recorded);
    ``domain``: what the rows are replayed with.

    Every read of the file runs in one read transaction: in WAL mode it sees the file as it
    was at its first read until it ends, so the rows, the materialized state and the payouts
    are those of one moment even while the service commits (docs/journal.md, "Verification").
    A file with no rows in a WAL is read immutable instead, and refused if it changed while it
    was read (:mod:`controller.journal.sqlite.read_only_file`).
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
        live = _FileRows(connection, domain)
        every = PROGRESS_ROWS  # read now: a test sets it lower
        checks = Verification(live, domain, keys, anchors, progress or _silent, every)
        report = checks.run(archives)
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
class _FileRows(Generic[State]):
    """An SQLite journal file, read in the read transaction :func:`verify` opened."""

    connection: sqlite3.Connection
    domain: Domain[State]

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

    def compare_state(self, replayed: State, report: VerifyReport) -> None:
        try:
            stored_state = load_state(sqlite_utils.Database(self.connection), self.domain)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
            report.problem(f"the materialized state cannot be read: {error}")
        else:
            report.pools |= self.domain.meters(replayed)
            for problem in self.domain.state_problems(replayed, stored_state):
                report.problem(problem)

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
