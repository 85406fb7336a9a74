"""A table closed by a forged status comes back when the daemon hears it; a silent one does not.

NY 9 NYCRR 5321.18(c): a table's progressive is unplayable while the controller does not hear
the table, and playable again once it does. Anyone who may publish on the broker can publish
`offline` on a table's retained status topic (docs/security.md, "Forged device rounds and
table status"): it closes the table, and it must not keep a table the daemon hears closed. The
real service in this event loop, a real mosquitto, the table's own MQTT link; every wait is on
a journaled row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiomqtt
from support.runtime.daemon import SITE, broker_settings, daemon, tables_announced, write_config

from drivers.mqtt.topics import Topics
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker


async def test_a_table_closed_by_a_forged_status_reopens_once_its_devices_are_heard(
    tmp_path: Path, mosquitto: Broker
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    async with (
        daemon(config) as running,
        MqttTableLink(broker_settings(mosquitto), "t1") as link,
        MqttTableLink(broker_settings(mosquitto), "t2"),
    ):
        await tables_announced(running, ["t1", "t2"])
        states = running.runtime.journal.state.table_states
        assert states["t1"].online
        # Someone on the broker says both tables are gone.
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as forger:
            for table_id in ("t1", "t2"):
                topic = Topics(SITE).table_status(table_id)
                await forger.publish(topic, b"offline", qos=1, retain=True)
        await running.until(
            lambda: (
                not running.runtime.journal.state.table_states["t1"].online
                and not running.runtime.journal.state.table_states["t2"].online
            ),
            "both tables closed by the forged status",
        )
        # t1's devices speak: it is heard, so it is playable again; t2 stays silent and closed.
        await link.heartbeat("t1", "shoe")
        await running.until(
            lambda: running.runtime.journal.state.table_states["t1"].online,
            "t1 reopened once heard",
        )
        assert not running.runtime.journal.state.table_states["t2"].online
