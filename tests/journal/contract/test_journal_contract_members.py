"""The journal port's contract exercises every member of the port, the reader and the outbox.

The contract (docs/journal.md, "The port") is this folder's case modules, their fixtures and
the backends they run against (tests/support/journal/journal_contract.py): each public member of the
protocols must be used somewhere in them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import support.journal.journal_contract

from controller.journal.port import JournalPort, PreparedAppend
from controller.journal.readonly import JournalReader
from controller.ports import Outbox


def _contract_source() -> str:
    """The text of the contract: its case modules, their fixtures and the backends' rig."""
    here = Path(__file__).parent
    parts = [*sorted(here.glob("test_journal_contract_*.py")), here / "conftest.py"]
    parts.append(Path(support.journal.journal_contract.__file__))
    return "\n".join(part.read_text() for part in parts)


def _members(protocol: type) -> set[str]:
    """A protocol's public members: its methods, properties and annotated attributes."""
    names = set(vars(protocol)) | set(vars(protocol).get("__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


@pytest.mark.parametrize("protocol", [JournalPort, PreparedAppend, JournalReader, Outbox])
def test_journal_contract_exercises_every_member_of_the_port_the_reader_and_the_outbox(
    protocol: type,
) -> None:
    source = _contract_source()
    members = _members(protocol)
    assert members  # the protocol was read
    unexercised = sorted(name for name in members if not re.search(rf"\.{name}\b", source))
    assert unexercised == [], f"{protocol.__name__} members no contract test uses"
