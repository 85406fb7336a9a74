"""The contract's fixtures: each backend at a location of the test's own, and a journal on it.

The backends are tests/support/journal/journal_contract.py's; every case module of this folder runs
against each of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.journal.journal_contract import BACKENDS, Backend
from support.journal.journal_rig import pool_opened, table_configured

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.ledger_journal import LedgerJournal


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    """Each backend, at a location of this test's own (the server started only when needed)."""
    return BACKENDS[request.param](request)


@pytest.fixture
def backend_journal(backend: Backend) -> Iterator[LedgerJournal]:
    """A journal holding one pool and one table."""
    opened = backend.open()
    for event in (pool_opened(), table_configured()):
        assert opened.append(event).applied
    yield opened
    opened.close()
