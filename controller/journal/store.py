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
the journal checks that the last row is still the one it knows and otherwise reloads the state
from the file first.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import msgspec
import sqlite_utils

from controller.effects import AnyEffect, PayoutMade, Verified, decode_effects, encode_effects
from controller.events import TableConfigured, decode_event, encode_event
from controller.journal.batch import Batch
from controller.journal.chain import GENESIS, row_hash
from controller.journal.codec import (
    payout_from_row,
    pool_from_json,
    pool_json,
    table_state_from_json,
    table_state_json,
    wagers_from_json,
    wagers_json,
)
from controller.journal.errors import JournalError
from controller.journal.schema import migrate
from controller.ledger import LedgerError, LedgerState, apply
from controller.manifest import ApprovedManifest
from controller.operators import Operator, Role
from controller.table_rules import table_rules

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from controller.events import AnyEvent

APPLIED: Final = "applied"
REJECTED: Final = "rejected"

JOURNAL_COLUMNS: Final = (
    "seq", "event_id", "kind", "at", "event", "outcome", "reason", "effects", "prev_hash", "hash",
)  # fmt: skip
INSERT_JOURNAL: Final = (
    f"INSERT INTO journal ({', '.join(JOURNAL_COLUMNS)}) "  # noqa: S608 - fixed column names
    f"VALUES ({', '.join('?' for _ in JOURNAL_COLUMNS)})"
)
LOOKUP_CHUNK: Final = 500
"""Event ids looked up per query (SQLite allows at least 999 parameters)."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What became of an appended event, once it is durable."""

    seq: int
    event_id: str
    outcome: str
    reason: str
    effects: tuple[AnyEffect, ...]
    duplicate: bool = False

    @property
    def applied(self) -> bool:
        """Whether the ledger accepted the event (a refusal is journaled too)."""
        return self.outcome == APPLIED


def connect(path: Path | str) -> sqlite_utils.Database:
    """Open the database with the journal's pragmas and explicit transactions."""
    connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    database = sqlite_utils.Database(connection)
    database.execute("PRAGMA journal_mode=WAL")
    database.execute("PRAGMA synchronous=FULL")
    database.execute("PRAGMA foreign_keys=ON")
    database.execute("PRAGMA busy_timeout=5000")
    return database


def load_state(database: sqlite_utils.Database) -> LedgerState:
    """The ledger state as materialized in the database."""
    pools = {
        row["pool_id"]: pool_from_json(row["state"])
        for row in database.query("SELECT * FROM pools")
    }
    events = {}
    for row in database.query("SELECT * FROM tables"):
        event = decode_event(row["config"])
        if not isinstance(event, TableConfigured):
            raise JournalError(
                f"table {row['table_id']}: stored configuration is a {type(event).__name__}"
            )
        events[row["table_id"]] = event
    rounds = {
        (row["table_id"], row["round_id"]): wagers_from_json(row["wagers"])
        for row in database.query("SELECT * FROM rounds")
    }
    pending = {
        row["payout_id"]: payout_from_row(row)
        for row in database.query("SELECT * FROM payouts WHERE status = 'pending'")
    }
    revision_row = list(database.query("SELECT value FROM meta WHERE key = 'revision'"))
    live = {
        row["table_id"]: table_state_from_json(row["state"])
        for row in database.query("SELECT * FROM table_states")
    }
    operators = {
        row["name"]: Operator(
            row["name"], Role(row["role"]), row["salt"], row["pin_hash"], row["kdf"]
        )
        for row in database.query("SELECT * FROM operators")
    }
    manifest_row = list(database.query("SELECT value FROM meta WHERE key = 'manifest'"))
    return LedgerState(
        manifest=_manifest(manifest_row[0]["value"]) if manifest_row else None,
        operators=operators,
        pools=pools,
        tables={table_id: table_rules(event) for table_id, event in events.items()},
        table_events=events,
        table_states=live,
        rounds=rounds,
        pending=pending,
        revision=int(revision_row[0]["value"]) if revision_row else 0,
    )


def _manifest_json(manifest: ApprovedManifest) -> str:
    return json.dumps(
        {
            "version": manifest.version,
            "software": manifest.software,
            "configuration": manifest.configuration,
            "files": [list(item) for item in manifest.files],
            "by": manifest.by,
        },
        sort_keys=True,
    )


def _manifest(text: str) -> ApprovedManifest:
    document = json.loads(text)
    files = tuple((path, digest) for path, digest in document["files"])
    return ApprovedManifest(
        document["version"], document["software"], document["configuration"], files, document["by"]
    )


def payout_columns(effect: PayoutMade, seq: int, at: str) -> dict[str, Any]:
    """The ``payouts`` row of a payout effect journaled at row ``seq``."""
    row: dict[str, Any] = {name: getattr(effect, name) for name in effect.__struct_fields__}
    row |= {"seq": seq, "at": at, "tax_report": int(effect.tax_report)}
    return row | {"verified_by": None, "verified_seq": None}


def _why(path: Path, error: sqlite3.Error) -> str:
    """SQLite's reason, and the file system's when it is read-only (SQLite may not say so)."""
    with contextlib.suppress(OSError):
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return f"{error} (the file system is read-only)"
    return str(error)


class Journal:
    """The ledger's durable home. One writer per process; see the module docstring."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.db = connect(self.path)
            migrate(self.db)
        except sqlite3.Error as error:
            reason = _why(self.path, error)
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

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _last_row(self) -> tuple[int, str]:
        row = self.db.conn.execute(
            "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else (0, GENESIS)

    def _known(self, event_ids: Sequence[str]) -> dict[str, Receipt]:
        """The receipts (``duplicate=True``) of those ids the journal already holds."""
        known: dict[str, Receipt] = {}
        unique = list(dict.fromkeys(event_ids))
        for first in range(0, len(unique), LOOKUP_CHUNK):
            chunk = unique[first : first + LOOKUP_CHUNK]
            marks = ", ".join("?" for _ in chunk)
            query = (
                "SELECT seq, event_id, outcome, reason, effects FROM journal "  # noqa: S608
                f"WHERE event_id IN ({marks})"
            )
            for seq, event_id, outcome, reason, effects in self.db.conn.execute(query, chunk):
                known[event_id] = Receipt(
                    seq, event_id, outcome, reason, tuple(decode_effects(effects)), duplicate=True
                )
        return known

    def append(self, event: AnyEvent) -> Receipt:
        """Apply and journal one event durably (see the module docstring)."""
        return self.append_many([event])[0]

    def append_many(self, events: Sequence[AnyEvent]) -> list[Receipt]:
        """Apply and journal several events in one transaction (group commit)."""
        try:
            return self._append(events)
        except sqlite3.Error as error:
            reason = _why(self.path, error)
            raise JournalError(f"{self.path}: cannot write the journal: {reason}") from error

    def _append(self, events: Sequence[AnyEvent]) -> list[Receipt]:
        connection = self.db.conn
        connection.execute("BEGIN IMMEDIATE")
        try:
            if self._last_row() != self._tail:  # another process wrote: catch up first
                self.state = self._load()
                self._tail = self._last_row()
            start, tail = self.state, self._tail
            state = start
            known = self._known([event.event_id for event in events])
            written: dict[str, Receipt] = {}
            receipts: list[Receipt] = []
            rows: list[tuple[Any, ...]] = []
            batch = Batch(start)
            for event in events:
                receipt = known.get(event.event_id)
                if receipt is None and event.event_id in written:  # twice in this batch
                    receipt = replace(written[event.event_id], duplicate=True)
                if receipt is None:
                    state, tail, receipt, row = self._write(state, tail, event)
                    rows.append(row)
                    batch.add(receipt, event, state)
                    written[event.event_id] = receipt
                receipts.append(receipt)
            connection.executemany(INSERT_JOURNAL, rows)
            self._materialize(batch, state)
            self._materialize_payouts(batch)
            connection.execute("COMMIT")
        except BaseException:
            # SQLite may already have rolled back (a full disk does that): the original error
            # is the one to report, not "no transaction is active".
            if connection.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
            raise
        self.state, self._tail = state, tail
        return receipts

    def _write(
        self, state: LedgerState, tail: tuple[int, str], event: AnyEvent
    ) -> tuple[LedgerState, tuple[int, str], Receipt, tuple[Any, ...]]:
        """Apply one event: the new state and tail, its receipt and its journal row."""
        try:
            new_state, effects = apply(state, event)
            outcome, reason = APPLIED, ""
        except LedgerError as error:
            new_state, effects, outcome, reason = state, (), REJECTED, str(error)
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
        return new_state, (seq, row["hash"]), receipt, tuple(row.values())

    def _replace(self, table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        """``INSERT OR REPLACE`` rows (values in the order of ``columns``) in one statement."""
        if rows:
            names, marks = ", ".join(columns), ", ".join("?" for _ in columns)
            statement = f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({marks})"  # noqa: S608
            self.db.conn.executemany(statement, rows)

    def _materialize(self, batch: Batch, new: LedgerState) -> None:
        """Write each changed row of the materialized state once, as the batch left it."""
        old = batch.start
        if new is old:
            return
        pools = [
            (key, pool_json(pool), seq) for key, pool, seq in batch.changed("pools", new.pools)
        ]
        self._replace("pools", ("pool_id", "state", "seq"), pools)
        tables = [
            (key, encode_event(config).decode(), seq)
            for key, config, seq in batch.changed("table_events", new.table_events)
        ]
        self._replace("tables", ("table_id", "config", "seq"), tables)
        live = [
            (key, table_state_json(state), seq)
            for key, state, seq in batch.changed("table_states", new.table_states)
        ]
        self._replace("table_states", ("table_id", "state", "seq"), live)
        if new.rounds is not old.rounds:
            rounds = [
                (key[0], key[1], wagers_json(wagers))
                for key, wagers in new.rounds.items()
                if old.rounds.get(key) is not wagers
            ]
            self._replace("rounds", ("table_id", "round_id", "wagers"), rounds)
            self.db.conn.executemany(
                "DELETE FROM rounds WHERE table_id = ? AND round_id = ?",
                list(old.rounds.keys() - new.rounds.keys()),
            )
        meta = []
        if new.revision != old.revision:
            meta.append(("revision", str(new.revision)))
        if new.manifest is not old.manifest and new.manifest is not None:
            meta.append(("manifest", _manifest_json(new.manifest)))
        self._replace("meta", ("key", "value"), meta)
        if new.operators is not old.operators:
            self._materialize_operators(batch, new)

    def _materialize_operators(self, batch: Batch, new: LedgerState) -> None:
        for name in batch.start.operators.keys() - new.operators.keys():
            self.db.conn.execute("DELETE FROM operators WHERE name = ?", [name])
        rows = [
            (name, str(operator.role), operator.salt, operator.pin_hash, operator.kdf, seq)
            for name, operator, seq in batch.changed("operators", new.operators)
        ]
        self._replace("operators", ("name", "role", "salt", "pin_hash", "kdf", "seq"), rows)

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

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journal row in order."""
        yield from self.db.query("SELECT * FROM journal ORDER BY seq")
