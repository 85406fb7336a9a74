"""The drivers' tests' journal: an empty real file behind the intake, closed after the test."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from controller.journal.sqlite import Journal

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.db") as opened:
        yield opened
