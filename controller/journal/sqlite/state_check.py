"""The start-up check of an SQLite journal: its rows replayed against its stored state.

What is checked, and what a checkpoint or the high-water mark must hold to be trusted, is
backend-neutral (:mod:`controller.journal.state_trust`, where the procedure is told); this
module walks the SQLite file's rows and snapshots through it. It also replays the rows another
process appended (:func:`catch_up`), for the running controller that finds them.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import TYPE_CHECKING, Any, Protocol

from controller.journal.chain import GENESIS
from controller.journal.checkpoints import KIND, Checkpointed
from controller.journal.domain import State
from controller.journal.row_checks import VerifyReport, check_link, replay_row
from controller.journal.sqlite.archive_records import archive_records
from controller.journal.sqlite.checkpoints import stored_snapshots
from controller.journal.sqlite.rows import read_rows, row_at
from controller.journal.state_trust import (
    StateCheck,
    behind_high_water,
    own_checkpoint,
    trusted_snapshot,
)

if TYPE_CHECKING:
    from collections.abc import Collection

    import sqlite_utils

    from controller.journal.domain import Domain
    from controller.outputs import SignedHead
    from controller.security.controller_key import ControllerKey


class Checked(Protocol[State]):
    """What the check reads of an SQLite journal: its file, its domain, the state it restored."""

    @property
    def db(self) -> sqlite_utils.Database:
        """The open journal file."""
        ...

    @property
    def domain(self) -> Domain[State]:
        """The domain its rows are replayed with."""
        ...

    @property
    def state(self) -> State:
        """The state restored from the materialized tables."""
        ...


def _row(connection: sqlite3.Connection, seq: int) -> dict[str, Any] | None:
    found = row_at(connection, seq)
    return None if found is None else found.values


def check_state(
    journal: Checked[State], key: ControllerKey, high_water: SignedHead | None = None
) -> StateCheck:
    """Check the journal's materialized state against its rows (see the module docstring).

    ``high_water``: the controller's last signed head, kept outside the journal
    (:mod:`..high_water`); the journal must still hold it, or it went back.
    """
    connection, domain = journal.db.conn, journal.domain
    check = StateCheck()
    start, previous, state = 0, GENESIS, domain.empty()
    records = archive_records(connection)
    archived = {(record.last_seq, record.last_hash) for record in records}
    row_of = functools.partial(_row, connection)
    if high_water is not None:
        through = records[-1].last_seq if records else 0
        if found := behind_high_water(row_of, through, high_water, journal.state):
            check.problems.append(found)
            return check
    if records:  # rows archived: the replay starts from what the last archive recorded
        start, previous = records[-1].last_seq, records[-1].last_hash
        state = domain.state_from_text(records[-1].state)
    try:
        snapshots = stored_snapshots(connection)
    except sqlite3.Error as error:
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
    after = (start, previous)
    state = _replay(connection, domain, after, state, key, check, archived=archived)
    check.problems += domain.differences(journal.state, state)
    return check


def _replay(  # noqa: PLR0913, PLR0917 - the rows, their domain, where from, the key, the findings
    connection: sqlite3.Connection,
    domain: Domain[State],
    after: tuple[int, str],
    state: State,
    key: ControllerKey | None,
    check: StateCheck,
    *,
    archived: Collection[tuple[int, str]] = (),
) -> State:
    """The state after the rows that follow row ``after`` (seq, hash), checked as they go."""
    start, previous = after
    report = VerifyReport()
    for read in read_rows(connection, start):
        row = read.values
        if read.form:
            report.problem(f"row {row['seq']}: {read.form}")
        if key is not None and row["kind"] == KIND:
            before = (start + check.replayed, previous)
            row_of = functools.partial(_row, connection)
            found = own_checkpoint(domain, row_of, row, before, state, key, archived=archived)
            check.problems += [found] if found else []
        check.replayed += 1
        check_link(row, start + check.replayed, previous, report)
        previous = str(row["hash"])
        state = replay_row(domain, state, row, report, {}, read.event)
    check.problems += report.problems
    return state


def catch_up(
    connection: sqlite3.Connection,
    domain: Domain[State],
    state: State,
    tail: tuple[int, str],
    stored: State,
) -> tuple[State, StateCheck]:
    """The state after the rows another process appended after ``tail``, and what is wrong.

    A running controller trusts its own state, not the tables another writer left: it replays
    that writer's rows from its own state and the tables must then agree
    (:meth:`controller.journal.sqlite.Journal.prepare` fails closed if they do not).
    """
    check = StateCheck()
    replayed = _replay(connection, domain, tail, state, None, check)
    check.problems += domain.differences(stored, replayed)
    return replayed, check
