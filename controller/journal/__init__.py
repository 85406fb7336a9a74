"""The durable, tamper-evident journal: what every backend shares, and the backends beside it.

See docs/journal.md for the format. :mod:`.port` is what the rest of the controller needs of
a journal; :mod:`.backends` opens the one a location names; :mod:`.appending` records what
the domain decided; :mod:`.chain` computes the hash chain; :mod:`.verification` and
:mod:`.row_checks` check the chain and replay it. The backends are sibling packages:
:mod:`.sqlite` (a file), :mod:`.postgres` (a database), :mod:`.memory` (a journal in the
process's memory, for tests).
"""

from controller.journal.errors import JournalError, SchemaError

__all__ = ["JournalError", "SchemaError"]
