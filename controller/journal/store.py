"""Appending events to the journal and restoring the ledger from it.

One SQLite file in WAL mode with ``synchronous=FULL``. Each event is applied to the ledger in
memory, then the journal row (event, outcome, effects, hash chain) and every changed row of
the materialized state (pools, tables, open rounds, payouts) are written in **one**
``BEGIN IMMEDIATE`` transaction; the in-memory state moves on only after it commits. An event
id seen before is acknowledged with its original outcome and not applied again. If the write
fails, the exception propagates and nothing changed: the caller fails closed.

Another process (a supervisor's command) may append to the same file: under the write lock,
the journal checks that the last row is still the one it knows and otherwise reloads the state
from the file first.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import msgspec
import sqlite_utils

from controller.effects import AnyEffect, PayoutMade, Verified, decode_effects, encode_effects
from controller.events import TableConfigured, decode_event, encode_event
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


class Journal:
    """The ledger's durable home. One writer per process; see the module docstring."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.db = connect(self.path)
            migrate(self.db)
        except sqlite3.Error as error:
            raise JournalError(f"{self.path}: cannot open the journal: {error}") from error
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
        rows = list(self.db.query("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"))
        return (rows[0]["seq"], rows[0]["hash"]) if rows else (0, GENESIS)

    def _find(self, event_id: str) -> Receipt | None:
        rows = list(self.db.query("SELECT * FROM journal WHERE event_id = ?", [event_id]))
        if not rows:
            return None
        row = rows[0]
        effects = tuple(decode_effects(row["effects"]))
        return Receipt(row["seq"], event_id, row["outcome"], row["reason"], effects, duplicate=True)

    def append(self, event: AnyEvent) -> Receipt:
        """Apply and journal one event durably (see the module docstring)."""
        return self.append_many([event])[0]

    def append_many(self, events: Sequence[AnyEvent]) -> list[Receipt]:
        """Apply and journal several events in one transaction (group commit)."""
        try:
            return self._append(events)
        except sqlite3.Error as error:
            raise JournalError(f"{self.path}: cannot write the journal: {error}") from error

    def _append(self, events: Sequence[AnyEvent]) -> list[Receipt]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self._last_row() != self._tail:  # another process wrote: catch up first
                self.state = self._load()
                self._tail = self._last_row()
            state, tail = self.state, self._tail
            receipts = []
            for event in events:
                receipt = self._find(event.event_id)
                if receipt is None:
                    state, tail, receipt = self._write(state, tail, event)
                receipts.append(receipt)
            self.db.execute("COMMIT")
        except BaseException:
            # SQLite may already have rolled back (a full disk does that): the original error
            # is the one to report, not "no transaction is active".
            if self.db.conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise
        self.state, self._tail = state, tail
        return receipts

    def _write(
        self, state: LedgerState, tail: tuple[int, str], event: AnyEvent
    ) -> tuple[LedgerState, tuple[int, str], Receipt]:
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
        self._insert("journal", row)
        self._materialize(state, new_state, seq, event, effects)
        return new_state, (seq, row["hash"]), Receipt(seq, event.event_id, outcome, reason, effects)

    def _insert(self, table: str, row: dict[str, Any], *, replace: bool = False) -> None:
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        self.db.execute(f"{verb} INTO {table} ({columns}) VALUES ({marks})", list(row.values()))

    def _materialize(
        self,
        old: LedgerState,
        new: LedgerState,
        seq: int,
        event: AnyEvent,
        effects: tuple[AnyEffect, ...],
    ) -> None:
        for pool_id, pool in new.pools.items():
            if old.pools.get(pool_id) is not pool:
                self._insert(
                    "pools",
                    {"pool_id": pool_id, "state": pool_json(pool), "seq": seq},
                    replace=True,
                )
        for table_id, config in new.table_events.items():
            if old.table_events.get(table_id) is not config:
                row = {"table_id": table_id, "config": encode_event(config).decode(), "seq": seq}
                self._insert("tables", row, replace=True)
        for table_id, live in new.table_states.items():
            if old.table_states.get(table_id) is not live:
                row = {"table_id": table_id, "state": table_state_json(live), "seq": seq}
                self._insert("table_states", row, replace=True)
        for key, wagers in new.rounds.items():
            if old.rounds.get(key) is not wagers:
                row = {"table_id": key[0], "round_id": key[1], "wagers": wagers_json(wagers)}
                self._insert("rounds", row, replace=True)
        for key in old.rounds.keys() - new.rounds.keys():
            self.db.execute("DELETE FROM rounds WHERE table_id = ? AND round_id = ?", list(key))
        if new.revision != old.revision:
            self._insert("meta", {"key": "revision", "value": str(new.revision)}, replace=True)
        if new.manifest is not old.manifest and new.manifest is not None:
            self._insert(
                "meta", {"key": "manifest", "value": _manifest_json(new.manifest)}, replace=True
            )
        if new.operators is not old.operators:
            self._materialize_operators(old, new, seq)
        self._materialize_payouts(seq, event, effects)

    def _materialize_operators(self, old: LedgerState, new: LedgerState, seq: int) -> None:
        for name in old.operators.keys() - new.operators.keys():
            self.db.execute("DELETE FROM operators WHERE name = ?", [name])
        for name, operator in new.operators.items():
            if old.operators.get(name) is not operator:
                row = {
                    "name": name,
                    "role": str(operator.role),
                    "salt": operator.salt,
                    "pin_hash": operator.pin_hash,
                    "kdf": operator.kdf,
                    "seq": seq,
                }
                self._insert("operators", row, replace=True)

    def _materialize_payouts(
        self, seq: int, event: AnyEvent, effects: tuple[AnyEffect, ...]
    ) -> None:
        for effect in effects:
            if isinstance(effect, PayoutMade):
                self._insert("payouts", payout_columns(effect, seq, event.at))
            elif isinstance(effect, Verified):
                self.db.execute(
                    "UPDATE payouts SET status = 'paid', verified_by = ?, verified_seq = ? "
                    "WHERE payout_id = ?",
                    [effect.by, seq, effect.payout_id],
                )

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journal row in order."""
        yield from self.db.query("SELECT * FROM journal ORDER BY seq")
