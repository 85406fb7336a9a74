"""The runtime tests' fixtures: clocks moved by hand.

``clocks`` are :class:`support.fake_clocks.Clocks`. The journals are the house's
(tests/support/journal/journal_rig.py): ``journal`` an empty file, ``table_journal`` one holding a
pool and a table; a module that needs another start names its own (``one_table`` in
tests/runtime/test_sequencer.py).
"""

from __future__ import annotations

import pytest
from support.fake_clocks import Clocks


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()
