"""The runtime tests' fixtures: a journal with a pool and a table, and clocks moved by hand.

``journal`` is a real file holding :func:`support.journal_rig.opened_journal`'s pool and table;
a module that needs another start (tests/runtime/test_sequencer.py) defines its own, which
pytest takes over this one. ``clocks`` are :class:`support.fake_clocks.Clocks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.fake_clocks import Clocks
from support.journal_rig import opened_journal

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.journal.sqlite import Journal


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with opened_journal(tmp_path / "journal.db") as journal:
        yield journal


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()
