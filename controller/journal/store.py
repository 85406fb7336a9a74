"""Appending events to the journal and restoring the ledger from it.

One SQLite file in WAL mode with ``synchronous=FULL``. Each event is applied to the ledger in
memory, then the journal row (event, outcome, effects, hash chain) and every changed row of
the materialized state (pools, tables, open rounds, payouts) are written in **one**
``BEGIN IMMEDIATE`` transaction; the in-memory state moves on only after it commits. An event
id seen before is acknowledged with its original outcome and not applied again. If the write
fails, the exception propagates and nothing changed: the caller fails closed.

Several events appended together (:meth:`Journal.append_many`, the sequencer's group commit)
share that one transaction, and its work: the ids are looked up in one query, the journal
rows inserted in one statement, and each changed row of the materialized state is written
once, as it stands after the last event that changed it (with that event's row as its
``seq``), rather than once per event. What the file holds once the transaction commits is the
same as if the events had been appended one by one.

Another process (a supervisor's command) may append to the same file: under the write lock,
the journal checks that the last row is still the one it knows and otherwise catches up first,
replaying that process's rows from its own state; the tables must equal the result, or nothing
is written (:meth:`Journal._catch_up`).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import msgspec
import sqlite_utils

from controller.effects import PayoutMade, Verified, encode_effects
from controller.events import encode_event
from controller.journal.batch import Batch
from controller.journal.chain import GENESIS, row_hash
from controller.journal.checkpoints import store_snapshot
from controller.journal.codec import pool_json, table_state_json, wagers_json
from controller.journal.devices import DeviceHighs, read_highs
from controller.journal.errors import JournalError
from controller.journal.identity import conflict_fault, same_event
from controller.journal.outbox import JournalOutbox
from controller.journal.reads import ReadSide
from controller.journal.restore import authority_json, load_state, manifest_json
from controller.journal.rows import INSERT, last_row, read_rows, rows_with_ids, stored_row
from controller.journal.schema import migrate
from controller.journal.transaction import Transaction, roll_back, why, write_error
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ports import APPLIED, INTERNAL_ERROR, REJECTED, Receipt

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from controller.events import AnyEvent
    from controller.journal.anchors import Anchor
    from controller.journal.checkpoints import Sealed
    from controller.journal.port import JournalPort
    from controller.journal.state_check import StateCheck
    from controller.journal.verify import VerifyReport
    from controller.security.controller_key import ControllerKey

log = logging.getLogger(__name__)

LOOKUP_CHUNK: Final = 500
"""Event ids looked up per query (SQLite allows at least 999 parameters)."""
PAGE_SIZE: Final = 2048
"""Bytes per page of a journal file created from now on (SQLite's default is 4096).

Each commit writes every page it changed to the WAL, whole, and most of those pages hold one
small change: a leaf of the event-id index per event (a batch's events come from different
tables, so they land in different leaves), the table's live-state row, the journal rows. At
2 KiB a page the WAL takes about 40 % fewer bytes per event than at 4 KiB, for the same
rows (docs/journal.md). A file that exists keeps the page size it was made with: SQLite
changes it only by rebuilding the file, which the controller never does by itself.
"""


def connect(path: Path | str) -> sqlite_utils.Database:
    """Open the database with the journal's pragmas and explicit transactions."""
    connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    database = sqlite_utils.Database(connection)
    database.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before WAL; a no-op on an existing file
    database.execute("PRAGMA journal_mode=WAL")
    database.execute("PRAGMA synchronous=FULL")
    database.execute("PRAGMA foreign_keys=ON")
    database.execute("PRAGMA busy_timeout=5000")
    return database


@functools.cache
def _upsert_statement(table: str, keys: tuple[str, ...], values: tuple[str, ...]) -> str:
    """The upsert of :meth:`Journal._upsert`, built once per table (fixed names only)."""
    names = ", ".join((*keys, *values))
    marks = ", ".join("?" for _ in (*keys, *values))
    updates = ", ".join(f"{name} = excluded.{name}" for name in values)
    return (
        f"INSERT INTO {table} ({names}) VALUES ({marks}) "  # noqa: S608
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates}"
    )


def payout_columns(effect: PayoutMade, seq: int, at: str) -> dict[str, Any]:
    """The ``payouts`` row of a payout effect journaled at row ``seq``."""
    row: dict[str, Any] = {name: getattr(effect, name) for name in effect.__struct_fields__}
    row |= {"seq": seq, "at": at, "tax_report": int(effect.tax_report)}
    return row | {"verified_by": None, "verified_seq": None}


class Journal(ReadSide):
    """The ledger's durable home. One writer per process; see the module docstring.

    It is the SQLite backend of :class:`controller.journal.port.JournalPort`; its reads for
    reports, displays and metrics come from :class:`controller.journal.reads.ReadSide`.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.db = connect(self.path)
            migrate(self.db)
        except sqlite3.Error as error:
            reason = why(self.path, error)
            raise JournalError(f"{self.path}: cannot open the journal: {reason}") from error
        self._tail = self._last_row()
        self.state = self._load()

    def _load(self) -> LedgerState:
        """The materialized state, or fail closed if it cannot be read."""
        try:
            return load_state(self.db)
        except (ValueError, KeyError, TypeError, msgspec.MsgspecError) as error:
            raise JournalError(
                f"{self.path}: the materialized state cannot be read ({error}); run jackpotd verify"
            ) from error

    @functools.cached_property
    def reader(self) -> sqlite_utils.Database:
        """A read-only connection of its own, for displays, metrics and reports.

        It sees what is committed, and never uses the writer's connection, which a commit may
        be using in the sequencer's commit thread at any moment.
        """
        try:
            connection = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise JournalError(f"{self.path}: cannot read the journal: {error}") from error
        connection.execute("PRAGMA busy_timeout=5000")
        return sqlite_utils.Database(connection)

    def outbox(self, sink: str) -> JournalOutbox:
        """The named sink's outbox, in this journal's file (its own connection)."""
        return JournalOutbox(self.path, sink)

    def close(self) -> None:
        """Close the database."""
        if "reader" in self.__dict__:
            self.reader.close()
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _catch_up(self) -> LedgerState:
        """The state after another writer's rows: replayed from ours, the tables checked.

        The tables that writer left are not taken on trust (docs/faults.md, "Edited state"):
        if they differ from the replay of its rows, nothing is written and the caller fails
        closed.
        """
        # Imported here: the check replays as verify does, and verify reads this module.
        from controller.journal.state_check import catch_up  # noqa: PLC0415

        state, check = catch_up(self.db.conn, self.state, self._tail, self._load())
        if not check.ok:
            shown = "; ".join(check.problems[:5])
            raise JournalError(
                f"{self.path}: another process wrote the journal, and the stored state is not "
                f"what its rows give: {shown}"
            )
        return state

    @property
    def head(self) -> tuple[int, str]:
        """The last row this journal knows: its ``seq`` and ``hash`` (0 and zeros if none)."""
        return self._tail

    def _last_row(self) -> tuple[int, str]:
        return last_row(self.db.conn) or (0, GENESIS)

    def _known(self, event_ids: Sequence[str]) -> dict[str, tuple[Receipt, str]]:
        """The receipts (``duplicate=True``) and events of those ids the journal holds."""
        known: dict[str, tuple[Receipt, str]] = {}
        unique = list(dict.fromkeys(event_ids))
        for first in range(0, len(unique), LOOKUP_CHUNK):
            for row in rows_with_ids(self.db.conn, unique[first : first + LOOKUP_CHUNK]):
                values = row.values
                receipt = Receipt(
                    values["seq"], values["event_id"], values["outcome"], values["reason"],
                    row.effects or (), duplicate=True,
                )  # fmt: skip
                known[values["event_id"]] = (receipt, values["event"])
        return known

    def append(self, event: AnyEvent) -> Receipt:
        """Apply and journal one event durably (see the module docstring)."""
        return self.append_many([event])[0]

    def append_many(
        self, events: Sequence[AnyEvent], *, snapshot: Sealed | None = None
    ) -> list[Receipt]:
        """Apply and journal several events in one transaction (group commit).

        ``snapshot``: a signed checkpoint among the events, whose snapshot of the state is
        stored in the same transaction (:mod:`controller.journal.checkpoints`).
        """
        transaction = self.prepare(events, snapshot=snapshot)
        transaction.commit()
        return self.adopt(transaction)

    def prepare(self, events: Sequence[AnyEvent], *, snapshot: Sealed | None = None) -> Transaction:
        """Everything of :meth:`append_many` but the ``COMMIT``, which the caller runs next.

        The write lock is held from here until :meth:`Transaction.commit` returns, and nothing
        may use this journal's connection meanwhile. The sequencer runs the commit (the WAL
        write and its ``fsync``) beside the event loop; see :mod:`controller.runtime.sequencer`.
        """
        try:
            return self._prepare(events, snapshot)
        except sqlite3.Error as error:
            raise write_error(self.path, error) from error

    def adopt(self, transaction: Transaction) -> list[Receipt]:
        """Move the in-memory state on to a committed transaction's; return its receipts."""
        if not transaction.committed:
            raise JournalError("a transaction must be committed before its state is adopted")
        self.state, self._tail = transaction.state, transaction.tail
        return transaction.receipts

    def _prepare(self, events: Sequence[AnyEvent], snapshot: Sealed | None) -> Transaction:
        connection = self.db.conn
        connection.execute("BEGIN IMMEDIATE")
        try:
            if self._last_row() != self._tail:  # another process wrote: catch up first
                self.state = self._catch_up()
                self._tail = self._last_row()
            start, tail = self.state, self._tail
            state = start
            known = self._known([event.event_id for event in events])
            receipts: list[Receipt] = []
            rows: list[tuple[Any, ...]] = []
            batch = Batch(start)
            devices = DeviceHighs()
            for event in events:
                seen = known.get(event.event_id)
                if seen is not None and not same_event(seen[1], event):
                    event = conflict_fault(seen[0].seq, seen[1], event)  # noqa: PLW2901
                    seen = known.get(event.event_id) or self._known([event.event_id]).get(
                        event.event_id
                    )
                    conflict = True
                else:
                    conflict = False
                if seen is None:
                    state, tail, receipt, row, text = self._write(state, tail, event)
                    rows.append(row)
                    batch.add(receipt, event, state)
                    devices.note(event)
                    # A second copy later in this batch is a duplicate of this one.
                    known[event.event_id] = (replace(receipt, duplicate=True), text)
                else:
                    receipt = seen[0]
                receipts.append(replace(receipt, conflict=True) if conflict else receipt)
            connection.executemany(INSERT, rows)
            devices.write(connection)
            self._materialize(batch, state)
            self._materialize_payouts(batch)
            if snapshot is not None:
                store_snapshot(connection, receipts, snapshot)
        except BaseException:
            roll_back(connection)
            raise
        return Transaction(self.path, connection, state, tail, receipts)

    def _write(
        self, state: LedgerState, tail: tuple[int, str], event: AnyEvent
    ) -> tuple[LedgerState, tuple[int, str], Receipt, tuple[Any, ...], str]:
        """Apply one event: the new state and tail, its receipt, its stored row, its text.

        The hash covers the row's canonical text; the file stores its compact form
        (:mod:`controller.journal.rows`).
        """
        try:
            new_state, effects = apply(state, event)
            outcome, reason = APPLIED, ""
        except LedgerError as error:
            new_state, effects, outcome, reason = state, (), REJECTED, str(error)
        except Exception as error:
            # A fault in the ledger itself, which the event found. The ledger is pure, so the
            # state is as it was: the event is refused and journaled like any refusal, and
            # whoever sent it is answered, instead of the exception stopping the sequencer
            # and the source receiving the same event again for ever.
            log.exception("the ledger failed on %s", event.event_id)
            new_state, effects, outcome = state, (), REJECTED
            reason = f"{INTERNAL_ERROR}: {type(error).__name__}: {error}"
        seq = tail[0] + 1
        row: dict[str, Any] = {
            "seq": seq,
            "event_id": event.event_id,
            "kind": type(event).__struct_config__.tag,
            "at": event.at,
            "event": encode_event(event).decode(),
            "outcome": outcome,
            "reason": reason,
            "effects": encode_effects(effects).decode(),
        }
        row["prev_hash"] = tail[1]
        row["hash"] = row_hash(tail[1], row)
        receipt = Receipt(seq, event.event_id, outcome, reason, effects)
        stored = stored_row(row, event, tuple(effects))
        return new_state, (seq, row["hash"]), receipt, stored, row["event"]

    def _upsert(
        self,
        table: str,
        keys: tuple[str, ...],
        values: tuple[str, ...],
        rows: list[tuple[Any, ...]],
    ) -> None:
        """Insert rows (``keys`` then ``values``), or update those whose key exists, in place.

        An upsert, not ``INSERT OR REPLACE``: a replace deletes the row and inserts it again
        under a new rowid, which rewrites a page at the end of the table and one of its key
        index besides the row's own. In place, a changed row costs its own page only.
        """
        if rows:
            self.db.conn.executemany(_upsert_statement(table, keys, values), rows)

    def _materialize(self, batch: Batch, new: LedgerState) -> None:
        """Write each changed row of the materialized state once, as the batch left it."""
        old = batch.start
        if new is old:
            return
        pools = [
            (key, pool_json(pool), seq) for key, pool, seq in batch.changed("pools", new.pools)
        ]
        self._upsert("pools", ("pool_id",), ("state", "seq"), pools)
        tables = [
            (key, encode_event(config).decode(), seq)
            for key, config, seq in batch.changed("table_events", new.table_events)
        ]
        self._upsert("tables", ("table_id",), ("config", "seq"), tables)
        live = [
            (key, table_state_json(state), seq)
            for key, state, seq in batch.changed("table_states", new.table_states)
        ]
        self._upsert("table_states", ("table_id",), ("state", "seq"), live)
        if new.rounds is not old.rounds:
            rounds = [
                (key[0], key[1], wagers_json(wagers))
                for key, wagers in new.rounds.items()
                if old.rounds.get(key) is not wagers
            ]
            self._upsert("rounds", ("table_id", "round_id"), ("wagers",), rounds)
            self.db.conn.executemany(
                "DELETE FROM rounds WHERE table_id = ? AND round_id = ?",
                list(old.rounds.keys() - new.rounds.keys()),
            )
        meta = []
        if new.revision != old.revision:
            meta.append(("revision", str(new.revision)))
        if new.manifest is not old.manifest and new.manifest is not None:
            meta.append(("manifest", manifest_json(new.manifest)))
        if new.authority != old.authority:
            meta.append(("authority", authority_json(new.authority)))
        self._upsert("meta", ("key",), ("value",), meta)
        if new.operators is not old.operators:
            self._materialize_operators(batch, new)

    def _materialize_operators(self, batch: Batch, new: LedgerState) -> None:
        for name in batch.start.operators.keys() - new.operators.keys():
            self.db.conn.execute("DELETE FROM operators WHERE name = ?", [name])
        rows = [
            (
                name, str(operator.role), operator.salt, operator.pin_hash, operator.kdf,
                operator.public_key, operator.failures, int(operator.locked), seq,
            )
            for name, operator, seq in batch.changed("operators", new.operators)
        ]  # fmt: skip
        columns = ("role", "salt", "pin_hash", "kdf", "public_key", "failures", "locked", "seq")
        self._upsert("operators", ("name",), columns, rows)

    def _materialize_payouts(self, batch: Batch) -> None:
        """Payouts and their verifications, in the order of the events that made them."""
        for receipt, event in batch.paying:
            for effect in receipt.effects:
                if isinstance(effect, PayoutMade):
                    row = payout_columns(effect, receipt.seq, event.at)
                    columns = ", ".join(row)
                    marks = ", ".join("?" for _ in row)
                    statement = f"INSERT INTO payouts ({columns}) VALUES ({marks})"  # noqa: S608
                    self.db.conn.execute(statement, tuple(row.values()))
                elif isinstance(effect, Verified):
                    self.db.conn.execute(
                        "UPDATE payouts SET status = 'paid', verified_by = ?, verified_seq = ? "
                        "WHERE payout_id = ?",
                        [effect.by, receipt.seq, effect.payout_id],
                    )

    def device_highs(self) -> dict[tuple[str, str], int]:
        """The highest event ``seq`` journaled from each device (:mod:`.devices`)."""
        return read_highs(self.db.conn)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journal row in order, as its canonical columns (:mod:`.rows`)."""
        for row in read_rows(self.db.conn):
            yield row.values

    def check_state(self, key: ControllerKey) -> StateCheck:
        """The start-up check (:func:`.state_check.check_state`)."""
        # Imported here: the check replays as verify does, and verify reads this module.
        from controller.journal.state_check import check_state  # noqa: PLC0415

        return check_state(self, key)

    def verify(self, *, keys: Sequence[str] = (), anchors: Sequence[Anchor] = ()) -> VerifyReport:
        """Check the chain and replay the journal from empty (:func:`.verify.verify`)."""
        # Imported here: verify reads this module.
        from controller.journal.verify import verify  # noqa: PLC0415

        return verify(self.path, keys=keys, anchors=anchors)


if TYPE_CHECKING:  # mypy proves the SQLite journal implements the port.
    _BACKEND: type[JournalPort[Transaction]] = Journal
