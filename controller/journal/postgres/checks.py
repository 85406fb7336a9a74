"""The PostgreSQL journal's checks: catching up, the start-up check, and ``jackpotd verify``.

Each is the SQLite file's, on this backend's rows (docs/journal.md: "Verification", "The
start-up check"): the same chain links (:func:`controller.journal.verify.check_link`), the same
replay of each row (:func:`~controller.journal.verify.replay_row`), the same checkpoint audit
(:mod:`controller.journal.checkpoint_audit`) and anchors; the materialized state is compared
with the replay value by value (:func:`controller.journal.snapshot.differences`). A
verification reads one snapshot of the database: one ``REPEATABLE READ`` read-only
transaction, so a journal the service commits to meanwhile verifies. A PostgreSQL journal has
no archive segments yet (docs/ha.md).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final

import psycopg

from controller.journal.anchors import check_anchor
from controller.journal.chain import GENESIS
from controller.journal.checkpoint_audit import at_head, audit, checkpoints_in
from controller.journal.checkpoints import (
    KIND,
    Checkpointed,
    StoredSnapshot,
)
from controller.journal.errors import JournalError
from controller.journal.postgres.connection import connect, reason
from controller.journal.postgres.reads import load_state
from controller.journal.postgres.rows import read_rows, row_at, rows_of_kinds
from controller.journal.snapshot import differences, digest
from controller.journal.state_check import StateCheck, own_checkpoint, trusted_snapshot
from controller.journal.verify import PROGRESS_ROWS, VerifyReport, check_link, replay_row
from controller.ledger.apply import LedgerState

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.journal.anchors import Anchor
    from controller.journal.location import DatabaseUrl
    from controller.journal.postgres.connection import Connection
    from controller.journal.verify import Payouts
    from controller.security.controller_key import ControllerKey

_PAYOUT_COLUMNS: Final = (
    "payout_id, table_id, round_id, seat, spot, kind, wager_cents, line, win_cents, "
    "returned_cents, from_meter_cents, pool_id, capped_cents, envy_from_seat, status, "
    "tax_report, hand, seq, at, verified_by, verified_seq"
)


def _replay(  # noqa: PLR0913 - the replay, its report, and what each caller keeps of it
    connection: Connection,
    after: tuple[int, str],
    state: LedgerState,
    report: VerifyReport,
    *,
    each: Callable[[dict[str, Any], tuple[int, str], LedgerState], None] | None = None,
    payouts: Payouts | None = None,
) -> LedgerState:
    """The state after the rows that follow row ``after`` (seq, hash), checked as they go.

    ``each`` sees every row before it is replayed, with the row before it and the state there.
    """
    expected, previous = after
    for read in read_rows(connection, expected):
        row = read.values
        if read.form:
            report.problem(f"row {row['seq']}: {read.form}")
        if each is not None:
            each(row, (expected, previous), state)
        expected += 1
        check_link(row, expected, previous, report)
        previous = str(row["hash"])
        state = replay_row(state, row, report, {} if payouts is None else payouts, read.event)
        report.head, report.rows = (int(row["seq"]), previous), report.rows + 1
    return state


def catch_up(
    connection: Connection, state: LedgerState, tail: tuple[int, str], stored: LedgerState
) -> tuple[LedgerState, StateCheck]:
    """The state after the rows another process appended after ``tail``, and what is wrong."""
    check, report = StateCheck(), VerifyReport()
    replayed = _replay(connection, tail, state, report)
    check.replayed = report.rows
    check.problems += report.problems + differences(stored, replayed)
    return replayed, check


# -- the start-up check ------------------------------------------------------------------------


def _row(connection: Connection, seq: int) -> dict[str, Any] | None:
    found = row_at(connection, seq)
    return None if found is None else found.values


def stored_snapshots(connection: Connection) -> list[StoredSnapshot]:
    """The snapshots the journal keeps, newest first."""
    rows = connection.execute("SELECT seq, head_seq, state FROM snapshots ORDER BY seq DESC")
    return [StoredSnapshot(int(seq), int(head), str(state)) for seq, head, state in rows]


def check_state(connection: Connection, stored: LedgerState, key: ControllerKey) -> StateCheck:
    """The materialized state ``stored`` against the rows (controller/journal/state_check.py)."""
    check = StateCheck()
    start, previous, state = 0, GENESIS, LedgerState()
    for snapshot in stored_snapshots(connection):
        trusted = trusted_snapshot(functools.partial(_row, connection), snapshot, key, check)
        if check.problems:
            return check
        if trusted is not None:
            event, state = trusted
            start, previous = event.head_seq, event.head_hash
            check.checkpoint = Checkpointed(snapshot.seq, event)
            break

    def own(row: dict[str, Any], before: tuple[int, str], at: LedgerState) -> None:
        found = own_checkpoint(functools.partial(_row, connection), row, before, at, key)
        check.problems += [found] if found else []

    report = VerifyReport()
    state = _replay(connection, (start, previous), state, report, each=own)
    check.replayed = report.rows
    check.problems += report.problems + differences(stored, state)
    return check


# -- jackpotd verify ---------------------------------------------------------------------------


def verify(
    url: DatabaseUrl,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    """Check a PostgreSQL journal (controller/journal/verify.py's checks); one snapshot read."""
    connection = connect(url, writes=False)
    try:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _verify(connection, keys, anchors, progress or (lambda _done, _total: None))
    except psycopg.Error as error:
        raise JournalError(f"{url}: cannot read the journal: {reason(error)}") from error
    finally:
        connection.close()  # ends the read transaction


def _verify(
    connection: Connection,
    keys: Sequence[str],
    anchors: Sequence[Anchor],
    progress: Callable[[int, int], None],
) -> VerifyReport:
    found = connection.execute("SELECT count(*) FROM journal").fetchone()
    total = int(found[0]) if found else 0
    report = VerifyReport(keys=len(keys), anchors=len(anchors))
    checkpoints = checkpoints_in(row.values for row in rows_of_kinds(connection, KIND))
    wanted = {event.head_seq for event in checkpoints.values()}
    kept = wanted | {anchor.seq for anchor in anchors}
    at_heads = {0: at_head(LedgerState())} if 0 in wanted else {}
    hashes: dict[int, str] = {}
    payouts: Payouts = {}

    def each(_row: dict[str, Any], before: tuple[int, str], state: LedgerState) -> None:
        """Keep what the checkpoints and anchors ask of the row before this one."""
        seq = before[0]
        if seq in kept and seq:
            hashes[seq] = before[1]
        if seq in wanted and seq:
            at_heads[seq] = at_head(state)
        if seq and seq % PROGRESS_ROWS == 0 and seq < total:
            progress(seq, total)

    state = _replay(connection, (0, GENESIS), LedgerState(), report, each=each, payouts=payouts)
    last = report.head[0]
    if last:  # the last row is covered as the others were, when the next one came
        each({}, report.head, state)
        hashes[last] = report.head[1]
    progress(report.rows, total)
    _compare(connection, state, payouts, report)
    report.checkpoints = audit(checkpoints, at_heads, hashes, keys=keys, problem=report.problem)
    for snapshot in stored_snapshots(connection):
        event = checkpoints.get(snapshot.seq)
        if event is None:
            report.problem(f"snapshot of row {snapshot.seq}: that row is not a checkpoint")
        elif snapshot.head_seq != event.head_seq or digest(snapshot.state) != event.state_digest:
            report.problem(f"snapshot of row {snapshot.seq}: not the state its checkpoint signed")
    for anchor in anchors:
        for problem in check_anchor(anchor, report.head[0], hashes.get, keys):
            report.problem(problem)
    return report


def _compare(
    connection: Connection, state: LedgerState, payouts: Payouts, report: VerifyReport
) -> None:
    """The materialized state and the payouts against the replay; each pool's money."""
    for pool_id, pool in sorted(state.pools.items()):
        report.pools[pool_id] = pool.meter_cents
        if pool.money_in() != pool.money_held_or_paid():
            report.problem(f"pool {pool_id}: money in does not equal money held or paid")
    try:
        stored_state = load_state(connection)
    except (ValueError, KeyError, TypeError) as error:
        report.problem(f"the materialized state cannot be read: {error}")
    else:
        for difference in differences(stored_state, state):
            report.problem(f"the materialized state differs from the replay: {difference}")
    names = [name.strip() for name in _PAYOUT_COLUMNS.split(",")]
    query = f"SELECT {_PAYOUT_COLUMNS} FROM payouts"  # noqa: S608 - fixed names
    stored = {row[0]: dict(zip(names, row, strict=True)) for row in connection.execute(query)}
    for payout_id in sorted(payouts.keys() | stored.keys()):
        if payouts.get(payout_id) != stored.get(payout_id):
            report.problem(f"payout {payout_id}: the stored payout differs from the replay")
