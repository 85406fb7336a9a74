"""``jackpotd journal copy`` of the ledger's journal: a file into a database (docs/ha.md).

:func:`controller.journal.copying.copy_journal`, both journals verified with the ledger.
"""

from __future__ import annotations

import functools

from controller.journal import copying
from controller.ledger.domain import LEDGER

copy_journal = functools.partial(copying.copy_journal, domain=LEDGER)
"""Copy the journal file ``source`` into the empty database ``target``, the ledger's."""
