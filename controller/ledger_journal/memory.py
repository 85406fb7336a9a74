"""The ledger's journal in this process's memory: the memory backend, recording the ledger.

:class:`MemoryJournal` and :class:`MemoryReader` are the backend's, opened with
:data:`controller.ledger.domain.LEDGER` unless another domain is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal.memory import readonly, store
from controller.ledger.domain import LEDGER
from controller.ledger.state import LedgerState

if TYPE_CHECKING:
    from controller.journal.domain import Domain
    from controller.journal.location import MemoryLocation

__all__ = ["MemoryJournal", "MemoryReader"]


class MemoryJournal(store.MemoryJournal[LedgerState]):
    """The ledger's journal ``memory://NAME`` (:class:`.store.MemoryJournal`)."""

    def __init__(self, location: MemoryLocation, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(location, domain)


class MemoryReader(readonly.MemoryReader[LedgerState]):
    """The ledger's journal ``memory://NAME``, read only (:class:`.readonly.MemoryReader`)."""

    def __init__(self, location: MemoryLocation, domain: Domain[LedgerState] = LEDGER) -> None:
        super().__init__(location, domain)
