"""History never goes back: the controller's signed high-water mark, kept outside the journal.

docs/security.md, "History never goes back". The running sequencer signs its journal's head
every so many rows or seconds into the high-water file; start-up refuses a journal that no
longer holds that row with that hash, before it signs anything over it. Each attack is one a
review reproduced: a restored backup that drops the rows after the last checkpoint (wagers
acknowledged, wins paid), and a row edited with the chain recomputed after it and the later
checkpoints removed. A real journal file, a real sequencer, the daemon's own start-up
(``build_runtime``); waits are bounded, on the updates published.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import rows_of, wager

from controller.config.load import parse_config
from controller.journal.chain import row_hash
from controller.journal.high_water import (
    HighWaterError,
    high_water_path,
    read_high_water,
    sign_head,
    write_high_water,
)
from controller.journal.sqlite.rows import read_rows
from controller.ledger_journal.sqlite import Journal
from controller.outputs import HeadUpdate
from controller.runtime.broadcast import Broadcast
from controller.runtime.checkpointing import StoredStateError
from controller.runtime.heads import HeadSchedule
from controller.runtime.sequencer import Sequencer
from controller.runtime.step_down import WENT_BACK
from controller.security.controller_key import ControllerKey
from controller.service.startup_checks import StartupError
from controller.service.wiring import build_runtime

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from controller.runtime.broadcast import Subscription

WAIT_S = 10.0


def start(path: Path, key: ControllerKey) -> None:
    """The daemon's start-up (``build_runtime``) on ``path``, then its journal closed again."""
    text = (
        f'[controller]\nsite = "s"\nid = "c1"\njournal = "{path}"\n\n'
        '[[pools]]\nid = "pool-a"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        'pool = "pool-a"\n\n[web]\nport = 1\n'
    )
    runtime = build_runtime(parse_config(text, "test.toml", path.parent), key=key)
    runtime.journal.close()


async def next_head(updates: Subscription, seq: int) -> HeadUpdate:
    """The first signed head at or past row ``seq``."""
    async with asyncio.timeout(WAIT_S):
        async for update in updates:
            if isinstance(update, HeadUpdate) and update.head.seq >= seq:
                return update
    raise AssertionError("the updates ended")  # pragma: no cover - a subscription never ends


@contextlib.asynccontextmanager
async def sequencing(
    path: Path, key: ControllerKey, *, every_rows: int = 100, every_s: float = 0.05
) -> AsyncIterator[tuple[Sequencer, Subscription]]:
    """A running sequencer signing heads into the journal's high-water file."""
    with Journal(path) as journal:
        broadcast = Broadcast()
        updates = broadcast.subscribe()
        sequencer = Sequencer(journal, broadcast)
        heads = HeadSchedule(
            key, "c1", high_water_path(str(path)), every_rows=every_rows, every_s=every_s
        )
        heads.resume()
        sequencer.heads = heads
        runner = asyncio.create_task(sequencer.run())
        try:
            yield sequencer, updates
        finally:
            await sequencer.close()
            runner.cancel()


async def play(path: Path, key: ControllerKey, first: int, count: int) -> int:
    """``count`` wagers journaled by a running sequencer; the row its last signed head covers."""
    async with sequencing(path, key) as (sequencer, updates):
        for number in range(first, first + count):
            await sequencer.submit(wager(f"w{number}", f"r{number}", 1))
        head = await next_head(updates, sequencer.journal.head[0])
    return head.head.seq


async def test_the_sequencer_signs_its_head_within_the_rows_and_seconds_it_is_given(
    played: Path, key: ControllerKey
) -> None:
    async with sequencing(played, key, every_rows=5, every_s=3600) as (sequencer, updates):
        for number in range(12):
            await sequencer.submit(wager(f"w{number}", f"r{number}", 1))
        first, second = await next_head(updates, 1), await next_head(updates, 1)
        assert second.head.seq - first.head.seq == 5  # every 5 rows, time never due
    async with sequencing(played, key, every_rows=10_000, every_s=0.05) as (sequencer, updates):
        receipt = await sequencer.submit(wager("w-late", "r-late", 1))
        head = (await next_head(updates, receipt.seq)).head  # one row, then seconds passed
    assert head.seq == receipt.seq
    assert head.hash == rows_of(played)[receipt.seq - 1]["hash"]
    assert read_high_water(high_water_path(str(played))) == head
    assert oct(high_water_path(str(played)).stat().st_mode & 0o777) == "0o640"


async def test_a_restored_backup_that_dropped_acknowledged_rows_is_refused_at_start(
    played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    start(played, key)  # checks it, checkpoints it
    backup = tmp_path / "backup.db"
    shutil.copy(played, backup)
    signed = await play(played, key, 0, 8)  # acknowledged wagers, the last head at `signed`
    with Journal(played) as journal:
        head = journal.head[0]
    # The backup restored: every row after the last checkpoint is gone, the chain verifies.
    played.unlink()
    shutil.copy(backup, played)
    with pytest.raises(StoredStateError) as refused:
        start(played, key)
    assert f"the controller signed row {signed}" in str(refused.value)
    assert f"the journal has no row {signed}" in str(refused.value)
    kinds = [row["kind"] for row in rows_of(played)]
    assert kinds.count("checkpoint") == 1  # nothing signed over the journal that went back
    assert signed <= head


async def test_a_row_edited_with_the_chain_recomputed_and_checkpoints_dropped_is_refused(
    played: Path, key: ControllerKey
) -> None:
    start(played, key)
    signed = await play(played, key, 0, 6)
    with closing(sqlite3.connect(played)) as raw, raw:
        raw.execute("DELETE FROM journal WHERE kind = 'checkpoint'")
        raw.execute("DELETE FROM snapshots")
        rows = [found.values for found in read_rows(raw, 0)]
        previous = str(rows[0]["prev_hash"])
        target = rows[-3]["seq"]
        for row in rows:
            seq = row["seq"]
            values = row
            if seq == target:
                raw.execute(
                    "UPDATE journal SET event = replace(event, '\"amount_cents\":100', "
                    "'\"amount_cents\":500') WHERE seq = ?",
                    [seq],
                )
                values = next(iter(read_rows(raw, seq - 1))).values
            digest = row_hash(previous, values)
            raw.execute("UPDATE journal SET hash = ? WHERE seq = ?", [bytes.fromhex(digest), seq])
            previous = digest
    with pytest.raises(StoredStateError) as refused:
        start(played, key)
    assert "the journal " in str(refused.value)
    assert f"signed row {signed}" in str(refused.value)


async def test_a_high_water_mark_someone_else_wrote_under_the_controllers_key_id_stops_it(
    played: Path, key: ControllerKey
) -> None:
    start(played, key)
    await play(played, key, 0, 3)
    path = high_water_path(str(played))
    genuine = read_high_water(path)
    assert genuine is not None
    lowered = msgspec.structs.replace(genuine, seq=1)  # edited to let a rollback through
    path.write_bytes(msgspec.json.encode(lowered))
    with pytest.raises(StartupError, match="not signed by this controller's key"):
        start(played, key)


async def test_a_mark_of_an_earlier_key_is_passed_over_after_the_key_is_rotated(
    played: Path, key: ControllerKey
) -> None:
    start(played, key)
    await play(played, key, 0, 3)
    rotated = ControllerKey.generate()
    start(played, rotated)  # the mark under the old key id is passed over, said so in the log


def test_the_running_controller_never_signs_a_head_below_its_mark(
    played: Path, key: ControllerKey
) -> None:
    with Journal(played) as journal:
        head = journal.head
        heads = HeadSchedule(key, "c1", high_water_path(str(played)))
        mark = sign_head(key, "c1", "", (head[0] + 5, "ab" * 32), "2026-12-01T00:00:00.000Z")
        write_high_water(heads.path, mark)
        heads.resume()
        with pytest.raises(HighWaterError, match="it went back"):
            heads.sign(journal, "2026-12-01T00:00:01.000Z")


async def test_a_journal_that_went_back_under_the_running_sequencer_ends_it_signing_nothing(
    played: Path, key: ControllerKey
) -> None:
    halted: list[tuple[int, str]] = []
    ended = asyncio.Event()

    def halt(status: int, why: str) -> None:
        halted.append((status, why))
        ended.set()

    with Journal(played) as journal:
        sequencer = Sequencer(journal, Broadcast(), halt=halt)
        heads = HeadSchedule(key, "c1", high_water_path(str(played)), every_rows=1)
        write_high_water(
            heads.path, sign_head(key, "c1", "", (journal.head[0] + 50, "cd" * 32), "x")
        )
        heads.resume()
        sequencer.heads = heads
        runner = asyncio.create_task(sequencer.run())
        try:
            await sequencer.submit(wager("w-after", "r-after", 1))
            async with asyncio.timeout(WAIT_S):
                await ended.wait()
        finally:
            runner.cancel()
    ((status, why),) = halted
    assert status == WENT_BACK
    assert "it went back" in why
    assert json.loads(high_water_path(str(played)).read_text())["hash"] == "cd" * 32
