"""``jackpotd journal copy`` of the ledger's journal: a file into a database (docs/ha.md).

:func:`controller.journal.copying.copy_journal`, both journals verified with the ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal import copying
from controller.ledger.domain import LEDGER

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.journal.anchors import Anchor
    from controller.journal.copying import Copied
    from controller.journal.location import JournalLocation


def copy_journal(
    source: JournalLocation,
    target: JournalLocation,
    *,
    keys: Sequence[str] = (),
    anchors: Sequence[Anchor] = (),
    progress: Callable[[int, int], None] | None = None,
) -> Copied:
    """Copy the journal file ``source`` into the empty database ``target``, the ledger's."""
    return copying.copy_journal(
        source, target, LEDGER, keys=keys, anchors=anchors, progress=progress
    )
