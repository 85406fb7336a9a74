"""The PostgreSQL journal's checks: catching up, the start-up check, and ``jackpotd verify``.

Each is the SQLite file's, on this backend's rows (docs/journal.md: "Verification", "The
start-up check"): the catch-up and the start-up check are the backend-neutral walk of
:mod:`controller.journal.state_check` over :class:`DatabaseRows`, and ``verify`` the
neutral :class:`controller.journal.verification.Verification` over this database's rows (the
same chain links, replay of each row, checkpoint audit and anchors; the materialized state is
compared with the replay value by value, through the domain). A
verification reads one snapshot of the database: one ``REPEATABLE READ`` read-only
transaction, so a journal the service commits to meanwhile verifies. Its archive segments
(:mod:`controller.journal.postgres.archive`) are verified with the live rows as the file's are
(:class:`controller.journal.verification.Verification`), and the start-up check starts from
the last archive's cut when no checkpoint's snapshot is usable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic

import psycopg

from controller.journal import state_check
from controller.journal.checkpoints import KIND, StoredSnapshot
from controller.journal.domain import State
from controller.journal.errors import JournalError
from controller.journal.postgres.archive_records import archive_records
from controller.journal.postgres.connection import connect, reason
from controller.journal.postgres.reads import load_state, stored_snapshots
from controller.journal.postgres.rows import provenances, read_rows, row_at, rows_of_kinds
from controller.journal.postgres.site_messages import stored_messages
from controller.journal.provenance import with_provenance
from controller.journal.verification import Verification

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from pathlib import Path

    from controller.journal.anchors import Anchor
    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.domain import Domain
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.connection import Connection
    from controller.journal.row_checks import VerifyReport
    from controller.journal.rows import Row
    from controller.journal.site_messages import Outboxed
    from controller.journal.state_trust import StateCheck
    from controller.outputs import SignedHead
    from controller.security.controller_key import ControllerKey

_PAYOUT_COLUMNS: Final = (
    "payout_id, table_id, round_id, seat, spot, kind, wager_cents, line, win_cents, "
    "returned_cents, from_meter_cents, pool_id, capped_cents, envy_from_seat, status, "
    "tax_report, hand, seq, at, verified_by, verified_seq"
)


@dataclass(frozen=True, slots=True)
class DatabaseRows:
    """The database's journal as the walk reads it: the walk's ``StoredRows``."""

    connection: Connection

    def archive_records(self) -> list[ArchiveRecord]:
        """The archive segments the journal records."""
        return archive_records(self.connection)

    def snapshots(self) -> list[StoredSnapshot]:
        """The snapshots it keeps, newest first."""
        return stored_snapshots(self.connection)

    def row_at(self, seq: int) -> Row | None:
        """Row ``seq``, or None."""
        return row_at(self.connection, seq)

    def read_rows(self, after: int) -> Iterator[Row]:
        """Every row after row ``after``, in order."""
        return read_rows(self.connection, after)


def catch_up(
    connection: Connection,
    domain: Domain[State],
    state: State,
    tail: tuple[int, str],
    stored: State,
) -> tuple[State, StateCheck]:
    """The state after the rows another process appended after ``tail``, and what is wrong."""
    return state_check.catch_up(DatabaseRows(connection), domain, state, tail, stored)


def check_state(
    connection: Connection,
    domain: Domain[State],
    stored: State,
    key: ControllerKey,
    high_water: SignedHead | None = None,
) -> StateCheck:
    """The materialized state ``stored`` against the rows (controller/journal/state_trust.py)."""
    return state_check.check_state(DatabaseRows(connection), domain, stored, key, high_water)


# -- jackpotd verify ---------------------------------------------------------------------------


def verify(  # noqa: PLR0913 - the journal, the command's options, its domain
    url: DatabaseUrl,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
    archives: Path | None = None,
    domain: Domain[State],
) -> VerifyReport:
    """Check a PostgreSQL journal as :func:`controller.journal.sqlite.verify.verify` checks a file.

    One snapshot read; ``archives``: the folder of its archive segments, verified with the live
    rows as one chain (without it, from the last archive's recorded state and hash); ``domain``:
    what the rows are replayed with.
    """
    if archives is not None and not archives.is_dir():
        raise JournalError(f"{archives}: no such folder of archive segments")
    connection = connect(url, writes=False)
    try:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        live = _DatabaseRows(connection, domain)
        shown = progress or (lambda _done, _total: None)
        return Verification(live, domain, keys, anchors, shown).run(archives)
    except psycopg.Error as error:
        raise JournalError(f"{url}: cannot read the journal: {reason(error)}") from error
    finally:
        connection.close()  # ends the read transaction


@dataclass(frozen=True, slots=True)
class _DatabaseRows(Generic[State]):
    """The database's journal as :class:`~controller.journal.verification.LiveJournal` reads it."""

    connection: Connection
    domain: Domain[State]

    def archive_records(self) -> list[ArchiveRecord]:
        return archive_records(self.connection)

    def count(self, *, after: int = 0, upto: int | None = None) -> int:
        query = "SELECT count(*) FROM journal WHERE seq > %s AND (%s::bigint IS NULL OR seq <= %s)"
        found = self.connection.execute(query, [after, upto, upto]).fetchone()
        return int(found[0]) if found else 0

    def rows(self, after: int) -> Iterator[Row]:
        return with_provenance(
            read_rows(self.connection, after), provenances(self.connection, after)
        )

    def checkpoint_rows(self) -> Iterable[Row]:
        return rows_of_kinds(self.connection, KIND)

    def compare_state(self, replayed: State, report: VerifyReport) -> None:
        report.pools |= self.domain.meters(replayed)
        for problem in self.domain.unbalanced(replayed):
            report.problem(problem)
        try:
            stored_state = load_state(self.connection, self.domain)
        except (ValueError, KeyError, TypeError) as error:
            report.problem(f"the materialized state cannot be read: {error}")
        else:
            for difference in self.domain.differences(stored_state, replayed):
                report.problem(f"the materialized state differs from the replay: {difference}")

    def payouts(self) -> dict[str, dict[str, Any]]:
        names = [name.strip() for name in _PAYOUT_COLUMNS.split(",")]
        query = f"SELECT {_PAYOUT_COLUMNS} FROM payouts"  # noqa: S608 - fixed names
        found = self.connection.execute(query)
        return {row[0]: dict(zip(names, row, strict=True)) for row in found}

    def snapshots(self) -> list[StoredSnapshot]:
        """The snapshots it keeps, newest first."""
        return stored_snapshots(self.connection)

    def site_messages(self) -> list[Outboxed] | None:
        return stored_messages(self.connection)
