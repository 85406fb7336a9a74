"""Reading the ledger state back from the journal's materialized rows (at start-up).

The rows are those :mod:`controller.journal.store` writes with every commit: pools, tables,
live table states, open rounds, pending payouts, operators, and the configuration revision
and approved manifest in ``meta``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from controller.events import TableConfigured, decode_event
from controller.journal.codec import (
    payout_from_row,
    pool_from_json,
    table_state_from_json,
    wagers_from_json,
)
from controller.journal.errors import JournalError
from controller.ledger import LedgerState
from controller.manifest import ApprovedManifest
from controller.operators import Operator, Role
from controller.table_rules import table_rules

if TYPE_CHECKING:
    import sqlite_utils


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
        manifest=manifest_from_json(manifest_row[0]["value"]) if manifest_row else None,
        operators=operators,
        pools=pools,
        tables={table_id: table_rules(event) for table_id, event in events.items()},
        table_events=events,
        table_states=live,
        rounds=rounds,
        pending=pending,
        revision=int(revision_row[0]["value"]) if revision_row else 0,
    )


def manifest_json(manifest: ApprovedManifest) -> str:
    """The approved manifest as its ``meta`` row holds it."""
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


def manifest_from_json(text: str) -> ApprovedManifest:
    """The inverse of :func:`manifest_json`."""
    document = json.loads(text)
    files = tuple((path, digest) for path, digest in document["files"])
    return ApprovedManifest(
        document["version"], document["software"], document["configuration"], files, document["by"]
    )
