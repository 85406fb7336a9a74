"""The daemon end to end with a serial table on a pty line, opened through pyserial.

A table's devices on the master end of a pty, the daemon on its slave (docs/architecture.md,
"The reference serial protocol"): rounds journaled once and acknowledged after the commit, and
a table closed for silence reopened by the first bet heard from it, which counts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from support.runtime.daemon import daemon, write_config
from support.runtime.floor import CONTRIBUTION_CENTS, POOL, SEED_CENTS, within
from support.runtime.played_tables import (
    Recorder,
    assert_journaled_once,
    device_rows,
    faults,
    line_up,
    play,
    simulated,
)

from controller.ledger_journal.sqlite import verify
from drivers.simulator_links import PtyPair, SerialTableLink

if TYPE_CHECKING:
    from pathlib import Path


async def test_serial_table_over_a_pty_through_pyserial_end_to_end(
    tmp_path: Path,
) -> None:
    """A table's devices on a pty line, the daemon on its slave through pyserial: N rounds.

    docs/architecture.md, "The reference serial protocol": frames with CRC, ACK after the journal
    commit, resend until ACKed. Serial acknowledges end to end, so once a send returns its
    event is journaled.
    """
    rounds = 8
    with PtyPair() as pty:
        config = write_config(tmp_path, serial={"t3": pty.path})
        reader, writer = await pty.open()
        async with daemon(config) as running, SerialTableLink("t3", reader, writer) as link:
            await line_up(link)
            table = Recorder(link)
            await within(play([simulated("t3", table, seed=41)], rounds), f"{rounds} rounds")

            rows = running.rows()
            assert_journaled_once(rows, table.ids())
            assert link.acknowledged == table.ids()
            pool = running.runtime.journal.state.pools[POOL]
            assert pool.wagers_count == table.progressive_wagers() > 0
            assert pool.hits_count == 0
            assert pool.meter_cents == SEED_CENTS + CONTRIBUTION_CENTS * pool.wagers_count
            closed = [
                effect.get("how", "held")
                for row in rows
                for effect in json.loads(row["effects"])
                if effect["effect"] in {"round-closed", "round-held"}
            ]
            assert closed == ["settled"] * rounds
            assert faults(rows) == []
            await running.stop()
    assert verify(tmp_path / "journal.db").ok


# Liveness: a table heard again.


async def test_a_table_heard_again_after_silence_has_its_first_bet_accepted(
    tmp_path: Path,
) -> None:
    """A table closed for silence reopens when it is heard again, and that bet counts.

    docs/architecture.md, "The standards it meets": a table's wagers are refused while it is
    offline, "until it is back"; the architecture (docs/architecture.md, "Failing closed"): it
    "reopens when it is heard again". The first thing heard from the table here is a progressive bet
    on its sensor (serial, so no status topic reopens it first): the table is back, the chip is on
    the spot, and the wager must be locked and contribute like every other.
    """
    with PtyPair() as pty:
        config = write_config(tmp_path, serial={"t3": pty.path}, heartbeat_timeout_s=1)
        reader, writer = await pty.open()
        async with daemon(config) as running, SerialTableLink("t3", reader, writer) as link:
            await line_up(link)
            table = Recorder(link)
            simulation = [simulated("t3", table, seed=71)]
            await within(play(simulation, 1, heartbeat_s=0.2), "a round")
            # Silence (no heartbeat, no event) past the timeout: the table is closed.
            await running.until_id("t3/liveness/", "t3 closed")
            await within(play(simulation, 1, heartbeat_s=0.2), "a round after the silence")

            rows = running.rows()
            refused = [
                (row["event_id"], row["reason"])
                for row in device_rows(rows)
                if row["outcome"] != "applied"
            ]
            assert refused == []
            pool = running.runtime.journal.state.pools[POOL]
            assert pool.wagers_count == table.progressive_wagers()
            await running.stop()
