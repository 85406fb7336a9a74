"""The ledger's journal: every backend opened with the ledger as the domain it records.

The journal (:mod:`controller.journal`) records a domain it is handed and imports nothing of
the ledger (docs/architecture.md, "The layers"); the ledger (:mod:`controller.ledger`) knows
nothing of the journal. This package, above both, is where the application binds them: each
way of opening a journal (the factory :mod:`controller.journal.backends`, the sequencer's and a
standby's openings, ``journal copy``) with :data:`controller.ledger.domain.LEDGER` as its
domain, and the journal's port typed with the ledger's state (:data:`LedgerJournal`,
:data:`LedgerReader`). The backends' own classes, opened the same way, are in
:mod:`.sqlite`, :mod:`.postgres` and :mod:`.memory`, and ``journal copy`` (a file into a
database) in :mod:`.copying`, each imported only when asked for (an SQLite journal's process
never loads psycopg, nor a database's the SQLite backend).
"""

from __future__ import annotations

import functools
from typing import Any, TypeAlias

from controller.journal import backends, sequencing
from controller.journal.port import JournalPort
from controller.journal.readonly import JournalReader
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

__all__ = [
    "LEDGER",
    "LedgerJournal",
    "LedgerReader",
    "append_to",
    "archive_journal",
    "open_journal",
    "open_reader",
    "open_sequenced",
    "open_standby",
    "reach_journal",
    "verify_journal",
    "writable",
]

LedgerJournal: TypeAlias = JournalPort[Any, LedgerState]
"""The journal as the application uses it: any backend, recording the ledger."""
LedgerReader: TypeAlias = JournalReader[LedgerState]
"""A journal opened read only, its state the ledger's."""

# Each opening of controller.journal.backends and controller.journal.sequencing, its domain the
# ledger's: their docstrings say what each does.
open_journal = functools.partial(backends.open_journal, domain=LEDGER)
"""The journal at a location, opened for writing."""
writable = functools.partial(backends.writable, domain=LEDGER)
"""Refuse now, in one line, a location no journal may be written at."""
append_to = functools.partial(backends.append_to, domain=LEDGER)
"""The journal a command appends to (it must exist unless ``must_exist=False``)."""
open_reader = functools.partial(backends.open_reader, domain=LEDGER)
"""The journal at a location, read only."""
archive_journal = functools.partial(backends.archive_journal, domain=LEDGER)
"""``jackpotd archive``: the same segments from a file or a database."""
reach_journal = functools.partial(backends.reach_journal, domain=LEDGER)
"""Fail now, in one line, if the journal's store cannot be reached."""
verify_journal = functools.partial(backends.verify_journal, domain=LEDGER)
"""``jackpotd verify``'s checks of the journal at a location, read only."""
open_sequenced = functools.partial(sequencing.open_sequenced, domain=LEDGER)
"""The journal for the sequencer of node ``fence.node`` (a database's fence taken first)."""
open_standby = functools.partial(sequencing.open_standby, domain=LEDGER)
"""A standby's journal of a database, its fence not taken."""
