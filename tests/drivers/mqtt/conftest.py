"""The MQTT drivers' tests' intake: a real journal (tests/drivers/conftest.py) behind it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.drivers.intake import JournalIntake

if TYPE_CHECKING:
    from controller.ledger_journal.sqlite import Journal


@pytest.fixture
def intake(journal: Journal) -> JournalIntake:
    return JournalIntake(journal)
