"""A fenced writer of a PostgreSQL journal in a process of its own, for tests that race it.

``python -m support.journal.postgres_appender URL KEY_FILE BATCHES`` (tests/ on ``PYTHONPATH``)
opens the journal as the service does, holding the sequencer's fence (node ``appender``), and
group-commits ``BATCHES`` batches of two plain rounds each (tests/support/journal/journal_rig.py),
with a checkpoint signed by ``KEY_FILE`` after every fifth batch, as the running controller
checkpoints. After each commit it prints the journal's head (``seq``) on a line of its own
and flushes, so that a test can act while it is still writing. It exits 0 once every batch
is committed, and 1 with the error on stderr if any append failed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from controller.journal.checkpoints import seal
from controller.journal.location import DatabaseUrl
from controller.journal.postgres.fence import Fence
from controller.ledger_journal.postgres import PostgresJournal
from controller.security.controller_key import load_key
from support.journal.journal_rig import AT, pool_opened, rounds, table_configured

CHECKPOINT_EVERY: Final = 5
"""Batches between two checkpoints."""
LEASE_S: Final = 5.0
"""The fence's lease: a group commit waits this long at most for the journal's lock."""


def main(url: str, key_file: str, batches: int) -> int:
    """Append the batches (see the module docstring); the exit status."""
    key = load_key(Path(key_file))
    with PostgresJournal(DatabaseUrl(url), fence=Fence("appender", lease_s=LEASE_S)) as journal:
        if journal.head[0] == 0:
            journal.append_many([pool_opened(), table_configured()])
        for batch in range(batches):
            journal.append_many(rounds(batch * 2, 2))
            if (batch + 1) % CHECKPOINT_EVERY == 0:
                sealed = seal(key, "c1", journal.state, journal.head, AT, domain=journal.domain)
                journal.append_many([sealed.event], snapshot=sealed)
            sys.stdout.write(f"{journal.head[0]}\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
