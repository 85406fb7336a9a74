"""The command line's tests share a local time zone of their choosing (``zone``) and ``days``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from support.cli.month_of_play import journal_month, month

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The process's local time zone, for one test: ``America/New_York`` unless parametrized."""
    name = getattr(request, "param", "America/New_York")
    monkeypatch.setenv("TZ", name)
    time.tzset()
    yield name
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The month of play's first three days, journaled: enough to edit a report of."""
    return journal_month(tmp_path_factory.mktemp("days") / "journal.db", list(month(3)))
