"""The ledger's tests share a journal in memory of their own (``where``), let go at each end."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

from controller.journal.location import MemoryLocation
from controller.journal.memory import database as memory

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def where() -> Iterator[MemoryLocation]:
    """The test's own journal in memory, let go at its end."""
    location = MemoryLocation(f"ledger-{uuid.uuid4().hex}")
    yield location
    memory.discard(location)
