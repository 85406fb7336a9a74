"""The daemon end to end through broker restarts, crashes and outages in the middle of play.

MQTT tables on a real mosquitto play against the in-process service
(tests/support/runtime/daemon.py, tests/support/runtime/played_tables.py) while the broker is
stopped, SIGKILLed or kept away past the tables' heartbeat timeout: never a cent lost or counted
twice (docs/faults.md, "Broker restarts and crashes"), tables closed and reopened as
docs/architecture.md says, ``jackpotd verify`` passing after.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest
from support.runtime.daemon import broker_settings, daemon, tables_announced, write_config
from support.runtime.floor import CONTRIBUTION_CENTS, POOL, SEED_CENTS, within
from support.runtime.played_tables import (
    Recorder,
    all_journaled,
    assert_journaled_once,
    play,
    sent_ids,
    simulated,
)

from controller.ledger_journal.sqlite import verify
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker


async def test_broker_restart_mid_play_loses_and_double_counts_no_wager(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """Two broker restarts (SIGTERM) while two tables play: no wager lost, none counted twice.

    docs/faults.md, "Broker restarts and crashes": never lose or double-count a cent through
    broker restarts. mosquitto saves its
    sessions when it stops; the tables publish again what the broker had not acknowledged; the
    controller's session keeps what was queued for it; the journal applies each id once.
    """
    rounds = 14
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    settings = broker_settings(mosquitto)
    async with (
        daemon(config) as running,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [simulated("t1", tables[0], seed=21), simulated("t2", tables[1], seed=22)]
        restarted = asyncio.Event()
        game = asyncio.create_task(play(simulation, rounds, until=restarted))
        for restart in range(2):
            await running.until_more(150, "play")
            await asyncio.to_thread(mosquitto.stop)
            await asyncio.sleep(0.3)  # the tables keep trying, with backoff
            await asyncio.to_thread(mosquitto.start)
            assert not game.done(), f"play ended before restart {restart}"
        restarted.set()
        await within(game, "play to finish after the restarts")
        await all_journaled(running, tables)

        assert_journaled_once(running.rows(), sent_ids(tables))
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
        assert pool.hits_count == 0
        assert pool.meter_cents == SEED_CENTS + CONTRIBUTION_CENTS * pool.wagers_count
        assert min(link1.connections, link2.connections) >= 2
        await running.stop()
    assert verify(tmp_path / "journal.db").ok


@pytest.mark.fault
async def test_broker_crash_sigkill_with_autosave_loses_and_double_counts_nothing(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """The broker SIGKILLed twice mid-round (persistence autosaved on every change), restarted.

    The broker comes back with whatever it last saved: stale in-flight state, so it delivers
    the controller many messages again (each a duplicate the journal applies once). What no
    broker can give back is a message it acknowledged to a table and had not saved
    (docs/mqtt.md: MQTT acknowledges hop by hop); so the tables pause mid-round and the kill
    comes once the controller has journaled everything acknowledged, as a crash between two
    bursts would. Everything published after the crash (while the broker is down, and once
    it is back) must then be journaled exactly once.
    """
    await asyncio.to_thread(mosquitto.stop)
    with mosquitto.config.open("a") as conf:  # docs/mqtt.md: "Recommended: autosave_on_changes"
        conf.write("autosave_on_changes true\nautosave_interval 1\n")
    await asyncio.to_thread(mosquitto.start)
    rounds = 12
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    settings = broker_settings(mosquitto)
    async with (
        daemon(config) as running,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [simulated("t1", tables[0], seed=61), simulated("t2", tables[1], seed=62)]
        game = asyncio.create_task(play(simulation, rounds))
        for _crash in range(2):
            await running.until_more(150, "play")
            await within(asyncio.gather(*(t.paused() for t in tables)), "the tables to pause")
            await all_journaled(running, tables)
            await asyncio.to_thread(mosquitto.kill)
            for table in tables:
                table.gate.set()  # play on: the links hold the events until the broker is back
            await asyncio.sleep(0.3)
            await asyncio.to_thread(mosquitto.start)
        await within(game, "play to finish after the crashes")
        await all_journaled(running, tables)

        assert_journaled_once(running.rows(), sent_ids(tables))
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
        assert pool.meter_cents == SEED_CENTS + CONTRIBUTION_CENTS * pool.wagers_count
        await running.stop()
    assert verify(tmp_path / "journal.db").ok


async def test_outage_past_heartbeat_timeout_closes_tables_then_reopens_them(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """A broker outage longer than the tables' timeout: CLOSED (journaled, told), then reopened.

    docs/architecture.md, "The standards it meets": losing communication with a table makes its
    progressive unplayable and its sign shows CLOSED until it is back. The tables hear it on
    ``table/<tid>/cmd/state`` once the broker is back (the sink's outbox, the table's persistent
    session), then play on.
    """
    rounds = 8
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"], heartbeat_timeout_s=1)
    settings = broker_settings(mosquitto)
    async with (
        daemon(config) as running,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [simulated("t1", tables[0], seed=31), simulated("t2", tables[1], seed=32)]
        game = asyncio.create_task(play(simulation, rounds, heartbeat_s=0.2))
        await running.until_more(200, "play")
        await asyncio.to_thread(mosquitto.stop)
        # Closed by whichever row comes first: the monitor's, once the timeout passes unheard,
        # or the tables' last wills, which a broker shutting down may still deliver.
        for table_id in ("t1", "t2"):

            def table_closed(table: str = table_id) -> bool:
                return not running.runtime.journal.state.table_states[table].online

            await running.until(table_closed, f"{table_id} closed")
        _status, body = await running.get("api/state")
        assert [t["online"] for t in json.loads(body)["tables"]] == [False, False]
        await asyncio.to_thread(mosquitto.start)
        await within(game, "play to finish after the outage")
        await all_journaled(running, tables)
        for link in (link1, link2):
            # The sign's "open again" comes through the sink after the reopening commit.
            await within(link.wait_state(is_open=True), f"{link.table_id} told open again")

        rows = running.rows()
        assert_journaled_once(rows, sent_ids(tables))
        for table_id, link in (("t1", link1), ("t2", link2)):
            changes = [
                json.loads(row["event"])
                for row in rows
                if row["kind"] == "table-status" and f'"table_id":"{table_id}"' in row["event"]
            ]
            closed = [c for c in changes if not c["online"]]
            assert closed, f"{table_id} was not closed during the outage"
            assert any(c["online"] for c in changes[changes.index(closed[0]) :])
            # Its sign was told CLOSED, then open again.
            assert [s.open for s in link.states][-1] is True
            assert False in [s.open for s in link.states]
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
        _status, body = await running.get("api/state")
        assert [t["online"] for t in json.loads(body)["tables"]] == [True, True]
        await running.stop()
    assert verify(tmp_path / "journal.db").ok
