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

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import sqlite_utils

from controller.effects import AnyEffect, PayoutMade, Verified, encode_effects
from controller.events import decode_event, encode_event
from controller.journal.anchors import check_anchor
from controller.journal.chain import GENESIS, row_hash
from controller.journal.checkpoint_audit import (
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
from controller.journal.rows import read_rows, rows_of_kinds
from controller.journal.store import payout_columns
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent
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
) -> VerifyReport:
    """Check a journal file; raises :class:`JournalError` if it cannot be read at all.

    ``keys``: the controller's public keys (base64) to check the checkpoints' signatures with;
    ``anchors``: saved heads that must be in the chain; ``progress``: called every
    :data:`PROGRESS_ROWS` rows and once at the end, with the rows checked and the rows in all.

    Every read runs in one read transaction: in WAL mode it sees the file as it was at its
    first read until it ends, so the rows, the materialized state and the payouts are those of
    one moment even while the service commits (docs/journal.md, "Verification").
    """
    location = Path(path)
    if not location.exists():
        raise JournalError(f"{location}: no such journal")
    try:
        connection = sqlite3.connect(f"file:{location}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as error:
        raise JournalError(f"{location}: cannot read the journal: {error}") from error
    connection.row_factory = sqlite3.Row
    try:
        connection.execute("BEGIN")
        return _verify(connection, keys, anchors, progress or _silent)
    except sqlite3.Error as error:
        raise JournalError(f"{location}: cannot read the journal: {error}") from error
    finally:
        connection.close()  # ends the read transaction


def _silent(done: int, total: int) -> None:
    """No progress shown."""


def _verify(
    connection: sqlite3.Connection,
    keys: Sequence[str],
    anchors: Sequence[Anchor],
    progress: Callable[[int, int], None],
) -> VerifyReport:
    """:func:`verify` inside its read transaction."""
    total = int(connection.execute("SELECT count(*) FROM journal").fetchone()[0])
    report = VerifyReport(rows=total, keys=len(keys), anchors=len(anchors))
    # The checkpoints first (a scan of one column), so that the rows they cover are known
    # when the replay passes them: only those rows' hashes and states are kept.
    checkpoints = checkpoints_in(row.values for row in rows_of_kinds(connection, KIND))
    wanted = {event.head_seq for event in checkpoints.values()}
    kept = wanted | {anchor.seq for anchor in anchors}
    previous, state = GENESIS, LedgerState()
    payouts: Payouts = {}
    at_heads: dict[int, AtHead] = {0: at_head(state)} if 0 in wanted else {}
    hashes: dict[int, str] = {}
    done = 0
    for expected, read in enumerate(read_rows(connection), 1):
        row = read.values
        if read.form:
            report.problem(f"row {row['seq']}: {read.form}")
        check_link(row, expected, previous, report)
        previous = row["hash"]
        state = replay_row(state, row, report, payouts, read.event)
        seq = int(row["seq"])
        report.head = (seq, str(row["hash"]))
        if seq in kept:
            hashes[seq] = str(row["hash"])
        if seq in wanted:
            at_heads[seq] = at_head(state)
        done = expected
        if done % PROGRESS_ROWS == 0 and done < total:
            progress(done, total)
    progress(done, total)
    if done:
        hashes[report.head[0]] = report.head[1]
    try:
        stored_state = load_state(sqlite_utils.Database(connection))
    except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
        report.problem(f"the materialized state cannot be read: {error}")
    else:
        _compare_state(state, stored_state, report)
    stored = {row["payout_id"]: dict(row) for row in connection.execute("SELECT * FROM payouts")}
    for payout_id in sorted(payouts.keys() | stored.keys()):
        if payouts.get(payout_id) != stored.get(payout_id):
            report.problem(f"payout {payout_id}: the stored payout differs from the replay")
    report.checkpoints = audit(checkpoints, at_heads, hashes, keys=keys, problem=report.problem)
    audit_snapshots(connection, checkpoints, report.problem)
    for anchor in anchors:
        for problem in check_anchor(anchor, done, hashes.get, keys):
            report.problem(problem)
    return report
