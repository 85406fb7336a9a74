"""The daemon end to end with malformed input: rejected, counted and journaled while play goes on.

Garbage on MQTT and damaged serial frames (docs/architecture.md, "The standards it meets";
docs/mqtt.md, "Rejected input") against the in-process service with simulated tables
(tests/support/runtime/daemon.py, tests/support/runtime/played_tables.py).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from support.runtime.daemon import broker_settings, daemon, metric, tables_announced, write_config
from support.runtime.floor import POOL, within
from support.runtime.played_tables import (
    TOPICS,
    Recorder,
    all_journaled,
    assert_journaled_once,
    faults,
    line_up,
    play,
    sent_ids,
    simulated,
)

from controller.ledger_journal.sqlite import verify
from drivers.serial.framing import encode_frame
from drivers.simulator_links import MqttTableLink, PtyPair, SerialTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker


async def test_malformed_mqtt_payload_and_bad_serial_frames_are_rejected_play_goes_on(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """Garbage on MQTT and a bad-CRC (and a bad-payload) serial frame: faults, counters, no harm.

    docs/architecture.md: unreasonable input is rejected ("The standards it meets"); on a bad CRC
    the host resyncs and the device resends; docs/mqtt.md "Rejected input": counted, journaled as a
    fault, acknowledged.
    """
    with PtyPair() as pty:
        config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"], serial={"t3": pty.path})
        reader, writer = await pty.open()
        async with (
            daemon(config) as running,
            MqttTableLink(broker_settings(mosquitto), "t1") as mqtt_link,
            SerialTableLink("t3", reader, writer) as serial_link,
        ):
            await tables_announced(running, ["t1"])
            await line_up(serial_link)
            tables = [Recorder(mqtt_link), Recorder(serial_link)]
            simulation = [simulated("t1", tables[0], seed=51), simulated("t3", tables[1], seed=52)]
            await within(play(simulation, 2), "rounds before the bad input")

            await mqtt_link.publish_raw("bet", b'{"v":1,"device":')  # cut short: not JSON
            await mqtt_link.publish_raw("lock", b'{"v":2,"device":"console","seq":1}')
            # A poison message: msgspec raises RecursionError, not a DecodeError, on it.
            await mqtt_link.publish_raw("bet", b"[" * 2000 + b"]" * 2000)
            twice = b'{"v":1,"device":"x","seq":1,"seat":1,"spot":"bonus","present":true,'
            await mqtt_link.publish_raw("bet", twice + b'"amount_cents":500,"amount_cents":9}')
            good = encode_frame("LOCK,console-x,1,r-x")
            crc = good[-6:-2]
            damaged = good[:-6] + (b"0000" if crc != b"0000" else b"FFFF") + b"\r\n"
            await serial_link.write_raw(damaged)
            nak = await within(serial_link.exchange("BET,sensor-x,1,0,progressive,1"), "a NAK")
            assert nak == "NAK,sensor-x,1,bad-seat"
            await running.until(lambda: len(running.ids("fault-")) >= 6, "six faults journaled")

            await within(play(simulation, 2), "rounds after the bad input")
            await all_journaled(running, tables)
            rows = running.rows()
            assert_journaled_once(rows, sent_ids(tables))
            pool = running.runtime.journal.state.pools[POOL]
            assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)
            rejected = Counter((fault["source"], fault["reason"]) for fault in faults(rows))
            event_topic = f"mqtt:{TOPICS.prefix}table/t1/event/"
            assert rejected == {
                (event_topic + "bet", "bad-json"): 1,
                (event_topic + "lock", "bad-version"): 1,
                (event_topic + "bet", "undecodable"): 1,
                (event_topic + "bet", "duplicate-key"): 1,
                ("serial:t3-line", "bad-crc"): 1,
                ("serial:t3-line", "bad-seat"): 1,
            }
            status, metrics = await running.get("metrics")
            assert status == 200
            health = await running.get("healthz")
            assert health[0] == 200, health  # every MQTT table still plays: no crash loop
            for reason in ("bad-json", "bad-version", "undecodable", "duplicate-key", "bad-crc"):
                assert metric(metrics, f'jackpotd_rejected_inputs_total{{reason="{reason}"}}') == 1
            frame_errors = (
                'jackpotd_serial_frame_errors_total{port="serial:t3-line",reason="bad-crc"}'
            )
            assert metric(metrics, frame_errors) == 1
            await running.stop()
    assert verify(tmp_path / "journal.db").ok
