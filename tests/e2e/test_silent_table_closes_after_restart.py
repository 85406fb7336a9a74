"""After every restart, a table not heard within its timeout is closed, whatever its status says.

NY 9 NYCRR 5321.18(c): a table the controller cannot monitor must not take progressive wagers.
A table's ``status`` topic is retained: a table that went silent without its last will (a clean
disconnect, a broker that kept the old ``online``) leaves ``online`` on the broker, and the
daemon's source journals it as the table opening at every start. The liveness monitor must close
it again once its timeout passes unheard, and ``jackpotd_table_online`` must say 0, so that the
offline alert fires. The real service in this event loop, a real mosquitto, restarted five times
on the same journal; every wait is on a journaled row, bounded.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from support.runtime.daemon import broker_settings, daemon, metric, tables_announced, write_config

from controller.events import BetSensed
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.config.load import Config

TIMEOUT_S = 1.0
RESTARTS = 5
ONLINE = 'jackpotd_table_online{table="t1"}'


async def test_5321_18c_a_silent_table_with_a_retained_online_is_closed_after_every_restart(
    tmp_path: Path, mosquitto: Broker
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"], heartbeat_timeout_s=TIMEOUT_S)
    async with daemon(config) as running:
        # The table is heard once (a heartbeat, then a bet on the same connection: the bet's
        # row says the heartbeat was taken), then goes away leaving its retained ``online``.
        async with MqttTableLink(broker_settings(mosquitto), "t1", offline_on_close=False) as link:
            await tables_announced(running, ["t1"])
            await link.heartbeat("t1", "shoe")
            await link.send(BetSensed("", "", "t1", "sensor", 1, 1, "progressive", True, 100))
            await running.until_id("t1/sensor/1", "the bet journaled")
        assert running.runtime.journal.state.table_states["t1"].online
        await running.stop()
    # The first restart finds the table open in the journal, the others closed for silence:
    # each time the retained ``online`` opens it, and each time it must close unheard.
    for restart in range(RESTARTS):
        await _closed_unheard(config, restart)


async def _closed_unheard(config: Config, restart: int) -> None:
    started = time.monotonic()
    async with daemon(config) as running:
        journal = running.runtime.journal
        # The retained ``online`` is journaled again at every start: the table opens.
        await tables_announced(running, ["t1"])
        await running.until(
            lambda: (
                bool(running.ids("t1/liveness/")) and not journal.state.table_states["t1"].online
            ),
            f"restart {restart}: t1 closed for silence",
        )
        assert time.monotonic() - started >= TIMEOUT_S, f"restart {restart}: closed too soon"
        status, body = await running.get("metrics")
        assert status == 200
        assert metric(body, ONLINE) == 0.0, f"restart {restart}: still counted online"
        status, body = await running.get("api/state")
        (table,) = json.loads(body)["tables"]
        assert not table["online"]
        assert table["closed"]["why"] == f"heartbeat timeout: silent for more than {TIMEOUT_S:g} s"
        await running.stop()
