"""The start-up check's walk of a journal, and the catch-up of another writer's rows: any backend.

What the check may trust of a checkpoint, of a checkpoint it replays through and of the
high-water mark is decided in :mod:`controller.journal.state_trust` (where the procedure is
told); this module walks a journal's archive records, snapshots and rows through it, once for
every backend. A backend hands its rows in through :class:`StoredRows`, four reads on its own
connection (:mod:`controller.journal.sqlite.state_check` for the file,
:mod:`controller.journal.postgres.checks` for a database), so that no backend replays or
trusts differently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from controller.journal.chain import GENESIS
from controller.journal.checkpoints import Checkpointed
from controller.journal.errors import JournalError
from controller.journal.row_checks import VerifyReport, check_link, replay_row
from controller.journal.state_trust import (
    StateCheck,
    behind_high_water,
    own_checkpoint,
    trusted_snapshot,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain, State
    from controller.journal.rows import Row
    from controller.outputs import SignedHead
    from controller.security.controller_key import ControllerKey


class StoredRows(Protocol):
    """What the check reads of a backend's journal, each read on one connection."""

    def archive_records(self) -> list[ArchiveRecord]:
        """The archive segments the journal records, oldest first."""
        ...

    def snapshots(self) -> list[StoredSnapshot]:
        """The snapshots it keeps, newest first; :class:`JournalError` if they cannot be read."""
        ...

    def row_at(self, seq: int) -> Row | None:
        """Row ``seq``, or None if the journal does not hold it."""
        ...

    def read_rows(self, after: int) -> Iterator[Row]:
        """Every row after row ``after``, in order."""
        ...


def check_state(
    rows: StoredRows,
    domain: Domain[State],
    stored: State,
    key: ControllerKey,
    high_water: SignedHead | None = None,
) -> StateCheck:
    """The materialized state ``stored`` against the rows (:mod:`.state_trust`'s procedure).

    ``high_water``: the controller's last signed head, kept outside the journal
    (:mod:`.high_water`); the journal must still hold it, or it went back.
    """
    check = StateCheck()
    start, previous, state = 0, GENESIS, domain.empty()
    records = rows.archive_records()
    archived = {(record.last_seq, record.last_hash) for record in records}

    def row_of(seq: int) -> dict[str, Any] | None:
        found = rows.row_at(seq)
        return None if found is None else found.values

    if high_water is not None:
        through = records[-1].last_seq if records else 0
        if found := behind_high_water(row_of, through, high_water, stored):
            check.problems.append(found)
            return check
    if records:  # rows archived: the replay starts from what the last archive recorded
        start, previous = records[-1].last_seq, records[-1].last_hash
        state = domain.state_from_text(records[-1].state)
    try:
        snapshots = rows.snapshots()
    except JournalError as error:
        check.problems.append(f"the snapshots cannot be read: {error}")
        return check
    for snapshot in snapshots:
        trusted = trusted_snapshot(domain, row_of, snapshot, key, check, archived=archived)
        if check.problems:
            return check
        if trusted is not None:
            event, state = trusted
            start, previous = event.head_seq, event.head_hash
            check.checkpoint = Checkpointed(snapshot.seq, event)
            break

    def own(row: dict[str, Any], before: tuple[int, str], at: State) -> None:
        found = own_checkpoint(domain, row_of, row, before, at, key, archived=archived)
        check.problems += [found] if found else []

    report = VerifyReport()
    state = replay(rows, domain, (start, previous), state, report, each=own)
    check.replayed = report.rows
    check.problems += report.problems + domain.differences(stored, state)
    return check


def catch_up(
    rows: StoredRows,
    domain: Domain[State],
    state: State,
    tail: tuple[int, str],
    stored: State,
) -> tuple[State, StateCheck]:
    """The state after the rows another process appended after ``tail``, and what is wrong.

    A running controller trusts its own state, not the tables another writer left: it replays
    that writer's rows from its own state, and the tables ``stored`` must then agree (each
    backend's ``prepare`` fails closed if they do not).
    """
    check, report = StateCheck(), VerifyReport()
    replayed = replay(rows, domain, tail, state, report)
    check.replayed = report.rows
    check.problems += report.problems + domain.differences(stored, replayed)
    return replayed, check


def replay(  # noqa: PLR0913 - the rows, their domain, where from, the findings, a look at each
    rows: StoredRows,
    domain: Domain[State],
    after: tuple[int, str],
    state: State,
    report: VerifyReport,
    *,
    each: Callable[[dict[str, Any], tuple[int, str], State], None] | None = None,
) -> State:
    """The state after the rows that follow row ``after`` (seq, hash), checked as they go.

    ``each`` sees every row before it is replayed, with the row before it and the state there.
    """
    expected, previous = after
    for read in rows.read_rows(expected):
        row = read.values
        if read.form:
            report.problem(f"row {row['seq']}: {read.form}")
        if each is not None:
            each(row, (expected, previous), state)
        expected += 1
        check_link(row, expected, previous, report)
        previous = str(row["hash"])
        state = replay_row(domain, state, row, report, {}, read.event)
        report.head, report.rows = (int(row["seq"]), previous), report.rows + 1
    return state
