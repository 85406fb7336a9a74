"""What the agent answers a device's frame, on a real outbox file (the line's I/O left out).

docs/ha.md, "Table agents": an ACK means the message is on disk and the agent answers for it;
a NAK means it was refused and will never be forwarded; silence means "send it again".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.drivers.agent_rig import line_settings

from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from drivers.agent.line import AgentLine
from drivers.agent.state import FaultLog

if TYPE_CHECKING:
    from pathlib import Path

PROGRESSIVE_BET = "BET,bs-1,1,3,progressive,1,100"


class Table:
    """The gate as the line sees it: open or closed, and what was stored."""

    def __init__(self, *, table_open: bool) -> None:
        self.open = table_open
        self.stored = 0

    def is_open(self) -> bool:
        """Whether progressive wagers are taken."""
        return self.open

    def wake(self) -> None:
        """The line stored a message."""
        self.stored += 1


def line_on(tmp_path: Path, table: Table) -> tuple[AgentLine, AgentOutboxStore]:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    line = AgentLine(
        line_settings("/dev/null"), outbox, FaultLog(outbox), table.is_open, table.wake
    )
    return line, outbox


def test_a_progressive_chip_is_stored_then_acked_while_open_and_refused_while_closed(
    tmp_path: Path,
) -> None:
    table = Table(table_open=True)
    line, outbox = line_on(tmp_path, table)
    assert line.answer(PROGRESSIVE_BET) == "ACK,bs-1,1"
    table.open = False
    assert line.answer("BET,bs-1,2,4,progressive,1,100") == "NAK,bs-1,2,table-closed"
    assert [row.payload for row in outbox.pending(0, 10)] == [PROGRESSIVE_BET]
    assert table.stored == 1
    assert line.refused["table-closed"] == 1
    assert [reason for _, reason, _ in outbox.faults()] == ["refused-table-closed"]


def test_a_resend_of_a_stored_chip_is_acked_again_even_once_the_table_has_closed(
    tmp_path: Path,
) -> None:
    # The ACK was lost (a kill, a noisy line) and the table closed meanwhile: a NAK now would
    # tell the device its chip was refused while the agent still forwards it.
    table = Table(table_open=True)
    line, outbox = line_on(tmp_path, table)
    assert line.answer(PROGRESSIVE_BET) == "ACK,bs-1,1"
    table.open = False
    assert line.answer(PROGRESSIVE_BET) == "ACK,bs-1,1"
    assert [row.seq for row in outbox.pending(0, 10)] == [1]  # stored once
    assert table.stored == 1


def test_an_outbox_that_cannot_be_written_leaves_the_device_unanswered(tmp_path: Path) -> None:
    table = Table(table_open=True)
    line, outbox = line_on(tmp_path, table)
    outbox.close()  # every read and write of the file now fails
    assert line.answer("LOCK,dealer,1,r1") is None  # silence: the device sends it again
    assert line.unanswered == 1


def test_a_payload_that_is_no_message_is_naked_when_it_names_its_device(tmp_path: Path) -> None:
    line, outbox = line_on(tmp_path, Table(table_open=True))
    assert line.answer("BET,bs-1,9,3,progressive,2,100") == "NAK,bs-1,9,bad-present"
    assert line.answer("WHAT,bs-1,10") == "NAK,bs-1,10,unknown-type"
    assert line.answer("BET,,") is None  # nobody to answer
    assert line.answer("HB,bs-1,11,8") == "ACK,bs-1,11"  # heartbeats are answered, not stored
    assert outbox.pending(0, 10) == []
