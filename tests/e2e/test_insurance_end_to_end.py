"""The NJ insurance wager end to end: a table on a real mosquitto, the daemon, SQLite, HTTP.

N.J.A.C. 13:69F-11.2(h) and docs/rules.md § 5.10: the daemon
(:func:`controller.service.wiring.serve`, in-process, as tests/e2e/test_end_to_end_mqtt_tables.py
runs it)
loads a configuration whose table offers the insurance wager on a paytable the operator filed, and a
table's devices speak MQTT to it (docs/mqtt.md). Chips on the ``insurance`` spot lock within the
spot's limits (one above them is refused, journaled and counted), the round's cards are dealt, and
the round settles: the player's own nine high wins 500 to 1, a pair loses, whatever the dealer
holds. The payouts are journaled, the metrics count the spot, and ``jackpotd verify`` passes after.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from support.rules.insurance import house_insurance
from support.runtime.daemon import (
    SITE,
    broker_settings,
    daemon,
    local_journal,
    metric,
    tables_announced,
)
from support.runtime.floor import free_port, within

from controller.clock import utc_now
from controller.config.load import load_config
from controller.events import (
    BetSensed,
    BetsLocked,
    CardDealt,
    DealComplete,
    DeviceInput,
    device_event_id,
)
from controller.ledger_journal.sqlite import verify
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.config.load import Config

TABLE = "t1"
HANDS = {
    1: "2c 3d 4h 5s 7c 8d 9h",  # a pai gow, nine high: 500 to 1
    2: "2s 2d 4c 5c 7h 8s 9d",  # a pair: no pai gow
    0: "Ah Kh Qd 9c 7d 3h 2h",  # the dealer's: ace high, which the insurance wager ignores
}


def write_config(tmp_path: Path, broker: Broker) -> Config:
    """One MQTT table offering insurance alone, on the operator's own paytable."""
    (tmp_path / "paytables").mkdir()
    (tmp_path / "paytables" / "house-insurance-1.toml").write_text(house_insurance())
    text = (
        f'[controller]\nsite = "{SITE}"\nid = "ins"\njournal = "{tmp_path / "journal.db"}"\n'
        'paytable_dirs = ["paytables"]\n\n'
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        f'[[tables]]\nid = "{TABLE}"\ntransport = "mqtt"\ninsurance = "house-insurance-1"\n'
        'minimum_wager = "$5"\nmaximum_wager = "$200"\n\n'
        f'[web]\nhost = "127.0.0.1"\nport = {free_port()}\n'
    )
    path = tmp_path / "jackpotd.toml"
    path.write_text(text)
    return load_config(path)


class Devices:
    """The table's bet sensor, console and shoe, numbering their events as devices do."""

    def __init__(self) -> None:
        self.session = uuid.uuid4().hex[:8]
        self.seqs: dict[str, int] = {}

    def event(self, kind: Callable[..., DeviceInput], device: str, *fields: object) -> DeviceInput:
        """The device's next event: its id, the time, the table, device and number, fields."""
        name = f"{device}-{self.session}"
        seq = self.seqs[name] = self.seqs.get(name, 0) + 1
        return kind(device_event_id(TABLE, name, seq), utc_now(), TABLE, name, seq, *fields)

    def round(self, chips: list[tuple[int, int]], round_id: str) -> list[DeviceInput]:
        """Insurance chips (seat, cents), the lock, the cards round-robin, the end of the deal."""
        events = [self.event(BetSensed, "sensor", s, "insurance", True, c) for s, c in chips]
        events.append(self.event(BetsLocked, "console", round_id))
        cards = {position: hand.split() for position, hand in HANDS.items()}
        events.extend(
            self.event(CardDealt, "shoe", round_id, position, cards[position][index])
            for index in range(7)
            for position in (1, 2, 0)
        )
        events.append(self.event(DealComplete, "shoe", round_id))
        return events


async def test_13_69f_11_2_h_insurance_settles_end_to_end_through_the_daemon_over_mqtt(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, mosquitto)
    devices = Devices()
    round_id = f"{devices.session}-1"
    events = devices.round([(1, 1_000), (2, 500), (3, 50_000)], round_id)
    async with (
        daemon(config) as running,
        MqttTableLink(broker_settings(mosquitto), TABLE) as link,
    ):
        await tables_announced(running, [TABLE])
        for event in events:
            await within(link.send(event), f"{event.event_id} acknowledged")
        await running.until_id(events[-1].event_id, "the end of the deal journaled")
        payouts = {
            row["seat"]: row
            for row in local_journal(running.runtime).db.query(
                "SELECT seat, spot, kind, line, wager_cents, win_cents, returned_cents, "
                "tax_report FROM payouts WHERE table_id = ? AND round_id = ?",
                [TABLE, round_id],
            )
        }
        assert payouts == {
            1: {
                "seat": 1, "spot": "insurance", "kind": "win", "line": "insurance-nine-high",
                "wager_cents": 1_000, "win_cents": 500_000, "returned_cents": 1_000,
                "tax_report": 1,  # $5,000 is at least $600 and 300 times the wager
            },
            2: {
                "seat": 2, "spot": "insurance", "kind": "loss", "line": None,
                "wager_cents": 500, "win_cents": 0, "returned_cents": 0, "tax_report": 0,
            },
        }  # fmt: skip
        refused = [
            (effect["seat"], effect["spot"], effect["reason"])
            for row in running.rows()
            if row["kind"] == "bets-locked"
            for effect in json.loads(row["effects"])
            if effect["effect"] == "wager-refused"
        ]
        assert refused == [
            (
                3,
                "insurance",
                "the insurance wager of $500.00 is above table t1's maximum of $200.00",
            )
        ]
        status, metrics = await running.get("metrics")
        assert status == 200
        labels = f'{{spot="insurance",table="{TABLE}"}}'
        assert metric(metrics, f"jackpotd_wagers_total{labels}") == 2
        assert metric(metrics, f"jackpotd_wagers_refused_total{labels}") == 1
        await running.stop()
    assert verify(tmp_path / "journal.db").ok
