"""``/healthz`` of the running daemon reports a source that keeps failing (docs/faults.md).

A floor whose MQTT tables cannot be heard is not healthy even while the journal is: the
daemon runs here in this event loop against a real mosquitto that is stopped and started.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from support.runtime.daemon import broker_settings, daemon, tables_announced, write_config
from support.runtime.floor import WAIT_S

from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.runtime.daemon import Daemon


async def health_becomes(running: Daemon, status: int) -> dict[str, object]:
    """``/healthz`` once it answers ``status`` (read again every 0.1 s, at most WAIT_S)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            answer, body = await running.get("healthz")
            if answer == status:
                return dict(json.loads(body))
            await asyncio.sleep(0.1)


async def test_healthz_reports_an_mqtt_source_that_keeps_failing_and_recovers(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    async with daemon(config) as running:
        async with MqttTableLink(broker_settings(mosquitto), "t1"):
            await tables_announced(running, ["t1"])
        healthy = await health_becomes(running, 200)
        assert healthy["sources"] == {"mqtt": "ok"}
        mosquitto.stop()
        sick = await health_becomes(running, 503)
        assert str(sick["reason"]).startswith("source mqtt failed")
        assert "in a row" in str(sick["sources"])
        _status, metrics = await running.get("metrics")
        assert 'jackpotd_source_failing{source="mqtt"} 1.0' in metrics
        mosquitto.start()
        assert (await health_becomes(running, 200))["sources"] == {"mqtt": "ok"}
        await running.stop()
