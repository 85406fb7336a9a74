"""Child process of the fenced-sequencer tests: a controller node's sequencer on a shared journal.

Run as ``python -m support.runtime.fenced_child URL NODE LEASE_S COMMIT_HANG_S`` (tests/ on
``PYTHONPATH``). It opens the PostgreSQL journal at URL as node NODE (taking the sequencer's
fence over, or ending as the service does when it cannot), prints ``ready EPOCH``, and runs a
real :class:`controller.runtime.sequencer.Sequencer` whose step-down really ends the process
(:mod:`controller.runtime.step_down`: 75 when fenced, 74 when a commit hangs). It submits the
set-up events of tests/support/journal/journal_child.py (fixed ids: a restart resends them
harmlessly), then, for each line ``FIRST COUNT`` read on standard input, events FIRST to FIRST +
COUNT - 1 of that script's stream for the seed ``fence``. Each receipt is printed once the event has
committed: ``ack EVENT_ID OUTCOME DUPLICATE``. At the end of its input it stops the sequencer,
closes the journal and prints ``done``.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from controller.journal.location import DatabaseUrl, journal_location
from controller.journal.postgres.fence import Fence
from controller.ledger_journal.postgres import PostgresJournal
from controller.runtime.broadcast import Broadcast
from controller.runtime.sequencer import Sequencer
from support.journal.journal_child import setup_events, stream

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ports import Receipt

SEED = "fence"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def acknowledge(receipts: list[asyncio.Future[Receipt]]) -> None:
    """Print each receipt, in order, once its event has committed."""
    for future in receipts:
        receipt = await future
        say(f"ack {receipt.event_id} {receipt.outcome} {int(receipt.duplicate)}")


async def serve(sequencer: Sequencer) -> None:
    """Submit the set-up, then what standard input asks for, until its end."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    runner = asyncio.create_task(sequencer.run())
    answers = [asyncio.create_task(acknowledge([sequencer.enqueue(e) for e in setup_events()]))]
    while line := await reader.readline():
        first, count = (int(word) for word in line.split())
        events: list[AnyEvent] = list(itertools.islice(stream(SEED), first, first + count))
        answers.append(asyncio.create_task(acknowledge([sequencer.enqueue(e) for e in events])))
    await asyncio.gather(*answers)
    await sequencer.close()
    runner.cancel()


def main(argv: list[str]) -> int:
    url, node, lease_s, hang_s = argv[1], argv[2], float(argv[3]), float(argv[4])
    location = journal_location(url, Path.cwd())
    assert isinstance(location, DatabaseUrl)
    journal = PostgresJournal(location, fence=Fence(node, lease_s))
    say(f"ready {journal.epoch}")
    try:
        asyncio.run(serve(Sequencer(journal, Broadcast(), commit_hang_s=hang_s)))
    finally:
        journal.close()
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
