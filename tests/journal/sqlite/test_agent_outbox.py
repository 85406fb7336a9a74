"""A table agent's outbox file: durable, in order, one boot per file, trimmed by acks."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest

from controller.agent.store import StoredEvent
from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from controller.ports import OutboxError

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-01-01T00:00:00Z"


def test_messages_are_numbered_in_order_and_kept_until_acknowledged(tmp_path: Path) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    assert outbox.store("bs-1", 1, "BET,bs-1,1,3,progressive,1,100", AT) == 1
    assert outbox.store("dealer", 1, "LOCK,dealer,1,r1", AT) == 2
    assert outbox.store("shoe", 7, "CARD,shoe,7,r1,0,As", AT) == 3
    assert [row.seq for row in outbox.pending(0, 10)] == [1, 2, 3]
    assert outbox.trim(2, epoch=0) == 2
    assert outbox.pending(0, 10) == [StoredEvent(3, "shoe", 7, "CARD,shoe,7,r1,0,As", AT)]
    assert (outbox.stored_high, outbox.acked) == (3, 2)


def test_a_device_resend_is_not_stored_twice(tmp_path: Path) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    assert outbox.store("bs-1", 5, "BET,bs-1,5,3,bonus,1,100", AT) == 1
    assert outbox.store("bs-1", 5, "BET,bs-1,5,3,bonus,1,100", AT) is None
    assert outbox.store("bs-1", 4, "BET,bs-1,4,3,bonus,1,100", AT) is None
    outbox.trim(1, epoch=0)
    assert outbox.store("bs-1", 5, "BET,bs-1,5,3,bonus,1,100", AT) is None  # even once trimmed


def test_a_restarted_agent_keeps_its_boot_and_goes_on_numbering(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    first = AgentOutboxStore(path, "t1")
    first.store("bs-1", 1, "BET,bs-1,1,3,bonus,1,100", AT)
    first.store("bs-1", 2, "BET,bs-1,2,3,bonus,1,100", AT)
    first.trim(1, epoch=4)
    boot = first.boot
    first.close()
    again = AgentOutboxStore(path, "t1")
    assert (again.boot, again.stored_high, again.acked, again.epoch) == (boot, 2, 1, 4)
    assert again.store("bs-1", 3, "BET,bs-1,3,3,bonus,1,100", AT) == 3
    assert [row.seq for row in again.pending(0, 10)] == [2, 3]


def test_a_wiped_outbox_starts_a_new_boot_at_seq_1(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    first = AgentOutboxStore(path, "t1")
    first.store("bs-1", 1, "BET,bs-1,1,3,bonus,1,100", AT)
    old_boot = first.boot
    first.close()
    for leftover in tmp_path.glob("agent.db*"):
        leftover.unlink()
    fresh = AgentOutboxStore(path, "t1")
    assert fresh.boot != old_boot
    assert fresh.store("bs-1", 1, "BET,bs-1,1,3,bonus,1,100", AT) == 1


def test_an_acknowledgement_never_moves_the_outbox_back(tmp_path: Path) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    for seq in range(1, 4):
        outbox.store("bs-1", seq, f"BET,bs-1,{seq},3,bonus,1,100", AT)
    outbox.trim(3, epoch=2)
    outbox.trim(1, epoch=1)
    assert (outbox.acked, outbox.epoch) == (3, 2)


def test_the_file_is_durable_wal_and_synchronous_full(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    AgentOutboxStore(path, "t1").close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    outbox = AgentOutboxStore(path, "t1")
    assert outbox._db.execute("PRAGMA synchronous").fetchone() == (2,)


def test_an_outbox_of_another_table_is_refused(tmp_path: Path) -> None:
    AgentOutboxStore(tmp_path / "agent.db", "t1").close()
    with pytest.raises(OutboxError, match="belongs to table 't1'"):
        AgentOutboxStore(tmp_path / "agent.db", "t2")


def test_the_agents_faults_are_kept_in_order(tmp_path: Path) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    outbox.fault("table-closed", "no acknowledgement for 10.0 s", AT)
    outbox.fault("ack-other-table", "for table 't2'", AT)
    assert [reason for _, reason, _ in outbox.faults()] == ["table-closed", "ack-other-table"]


def test_a_file_that_cannot_be_written_is_an_outbox_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    outbox = AgentOutboxStore(path, "t1")
    outbox.close()
    with pytest.raises(OutboxError):
        outbox.store("bs-1", 1, "BET,bs-1,1,3,bonus,1,100", AT)


def test_the_progressive_chips_are_kept_with_the_message_that_left_them(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    outbox = AgentOutboxStore(path, "t1")
    assert outbox.progressive_chips == frozenset()
    outbox.store("bs-1", 1, "BET,bs-1,1,3,progressive,1,100", AT, frozenset({3}))
    outbox.store("bs-1", 2, "BET,bs-1,2,5,progressive,1,100", AT, frozenset({3, 5}))
    assert outbox.store("bs-1", 2, "BET,bs-1,2,5,progressive,1,100", AT, frozenset()) is None
    outbox.close()
    again = AgentOutboxStore(path, "t1")
    assert again.progressive_chips == {3, 5}  # a resend changed nothing; a restart keeps them


def test_pending_reads_on_from_a_seq_in_batches(tmp_path: Path) -> None:
    outbox = AgentOutboxStore(tmp_path / "agent.db", "t1")
    for seq in range(1, 8):
        outbox.store("bs-1", seq, f"BET,bs-1,{seq},3,bonus,1,100", AT)
    outbox.trim(2, epoch=0)
    assert [row.seq for row in outbox.pending(0, 3)] == [3, 4, 5]  # never what is acknowledged
    assert [row.seq for row in outbox.pending(5, 3)] == [6, 7]
