"""Real controller processes on one PostgreSQL journal: a zombie commits nothing, a hang ends one.

Each node is tests/support/runtime/fenced_child.py, a real sequencer in its own process whose
step-down really ends it (controller/runtime/step_down.py); docs/ha.md, "The fenced sequencer". What
the journal then holds is read from the database and checked with ``verify``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from support.runtime.floor import within

from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import verify as verify_database
from controller.runtime.step_down import COMMIT_HUNG, FENCED

if TYPE_CHECKING:
    from support.journal.stalled_postgres import StalledServer

TESTS = Path(__file__).resolve().parents[1]
SETUP = ["setup/pool-a", "setup/T1", "setup/pool-b", "setup/T2"]


@dataclass
class Node:
    """One controller node's process, and the receipts it printed."""

    process: asyncio.subprocess.Process
    epoch: int = 0
    acks: list[tuple[str, bool]] = field(default_factory=list)

    async def line(self) -> str:
        """Its next line of output."""
        assert self.process.stdout is not None
        return (await self.process.stdout.readline()).decode().strip()

    async def ready(self) -> None:
        """Wait until it has opened the journal; keep the epoch it took."""
        words = (await within(self.line(), "the node to open its journal")).split()
        assert words[0] == "ready", words
        self.epoch = int(words[1])

    def send(self, first: int, count: int) -> None:
        """Ask for events ``first`` to ``first + count - 1`` (the node may have ended)."""
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.process.stdin.write(f"{first} {count}\n".encode())

    async def acknowledged(self, count: int) -> None:
        """Wait for ``count`` more receipts."""

        async def read() -> None:
            target = len(self.acks) + count
            while len(self.acks) < target:
                words = (await self.line()).split()
                assert words, "the node ended"
                assert words[0] == "ack", words
                self.acks.append((words[1], words[3] == "1"))

        await within(read(), f"{count} receipts")

    async def finish(self) -> tuple[int, str]:
        """Close its input; its exit status and what it said on standard error."""
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.process.stdin.close()
        status = await within(self.process.wait(), "the node to end")
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        for line in (await self.process.stdout.read()).decode().splitlines():
            words = line.split()
            if words[0] == "ack":
                self.acks.append((words[1], words[3] == "1"))
        return status, (await self.process.stderr.read()).decode()


async def start(url: str, node: str, *, lease_s: float, hang_s: float) -> Node:
    paths = [str(TESTS.parent), str(TESTS), os.environ.get("PYTHONPATH", "")]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, paths))}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "support.runtime.fenced_child", url, node, str(lease_s), str(hang_s),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    return Node(process)


def journaled(url: str) -> list[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute("SELECT event_id FROM journal ORDER BY seq").fetchall()
    return [str(event_id) for (event_id,) in rows]


def fence_row(url: str) -> tuple[int, str]:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT epoch, holder FROM sequencer_fence").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


async def test_a_zombie_leader_stopped_past_its_lease_commits_nothing_and_exits_75(
    postgres_url: str,
) -> None:
    first = await start(postgres_url, "node-a", lease_s=1, hang_s=30)
    await first.ready()
    first.send(0, 20)
    await first.acknowledged(len(SETUP) + 20)
    os.kill(first.process.pid, signal.SIGSTOP)  # paused: no renewal, no commit
    try:
        second = await start(postgres_url, "node-b", lease_s=1, hang_s=30)
        await second.ready()  # it waited out node-a's lease, then took over
        assert (first.epoch, second.epoch) == (1, 2)
        second.send(20, 20)
        await second.acknowledged(len(SETUP) + 20)
    finally:
        os.kill(first.process.pid, signal.SIGCONT)
    first.send(40, 20)  # what a zombie would go on sequencing
    status, said = await first.finish()
    assert status == FENCED
    assert "node 'node-b' took the sequencer over (epoch 2)" in said
    assert len(first.acks) == len(SETUP) + 20  # not one receipt after its pause
    status, _ = await second.finish()
    assert status == 0

    rows = journaled(postgres_url)
    acked = {event_id for event_id, _ in first.acks + second.acks}
    assert acked <= set(rows)  # every acknowledged event is journaled...
    assert all(count == 1 for count in Counter(rows).values())  # ...once
    assert set(rows) == acked  # and nothing of the zombie's after it was taken over
    assert all(dup for event_id, dup in second.acks if event_id in SETUP)
    assert fence_row(postgres_url) == (2, "node-b")
    assert verify_database(DatabaseUrl(postgres_url)).ok


async def test_a_commit_hung_on_replication_ends_the_process_74_and_a_restart_recovers_all(
    stalled_postgres: StalledServer,
) -> None:
    url = stalled_postgres.url
    first = await start(url, "node-a", lease_s=30, hang_s=1)
    await first.ready()  # taking over does not wait for the standby
    first.send(0, 10)
    status, said = await first.finish()
    assert status == COMMIT_HUNG
    assert "a COMMIT has not returned in 1 s" in said
    assert first.acks == []  # nothing acknowledged
    stalled_postgres.release()  # the standby is back: the waiting COMMIT returns

    again = await start(url, "node-a", lease_s=30, hang_s=1)
    await again.ready()  # the same node restarting: it takes over once that COMMIT has ended
    assert again.epoch == 2
    again.send(0, 10)
    await again.acknowledged(len(SETUP) + 10)
    status, _ = await again.finish()
    assert status == 0
    # The hung COMMIT was never cancelled: its batch (the set-up) is in, and the restart's
    # resend of it is answered as the duplicates they are.
    assert [dup for event_id, dup in again.acks if event_id in SETUP] == [True] * len(SETUP)
    rows = journaled(url)
    assert rows[: len(SETUP)] == SETUP
    assert sorted(rows) == sorted(event_id for event_id, _ in again.acks)
    assert all(count == 1 for count in Counter(rows).values())
    assert verify_database(DatabaseUrl(url)).ok
