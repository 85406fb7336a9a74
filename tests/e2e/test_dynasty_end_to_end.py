"""The EZ Pai Gow Dynasty Bonus settled end to end: table devices on a real mosquitto, the daemon.

An NJ site (N.J.A.C. 13:69F-11(i), the ``nj`` Dynasty profile) runs the real service in-process
(:func:`controller.service.wiring.serve`) with one EZ Pai Gow table on MQTT offering the ``dynasty``
spot. Its paytable is the operator's own file (a copy of the NJ sample with its own name: the
configuration refuses a sample). The table's bet sensor, dealer console and shoe publish one
round: three chips on the Dynasty spot (one above the table's maximum), seven cards each to
three seats and the dealer. The journal must then hold the Dynasty wins, the Envy of each
qualifying wager for every other player's Envy hand (not the dealer's, not one's own), the
pending verification of the large win announced to the signs, and ``jackpotd verify`` pass.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from typing import TYPE_CHECKING

from support.runtime.daemon import daemon, local_journal, probe, tables_announced
from support.runtime.floor import free_port, within

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
from controller.plugins import FiniteSource
from controller.service.wiring import serve
from drivers.mqtt.outgoing import decode_hit
from drivers.mqtt.settings import BrokerSettings
from drivers.mqtt.topics import Topics
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.config.load import Config
    from controller.runtime.view import Runtime

SITE = "ez"
TABLE = "ez1"
AT = "2026-12-01T00:00:00.000Z"
HANDS = {
    1: "2h 3h 4h 5h 6h 7h 8h",  # seven-card natural straight flush: 5,000 to 1, $1,000 Envy
    2: "3c 6c 8c Tc Kc 4d 7s",  # flush: 4 to 1
    3: "9c 9d 9h 9s 2c 5d Jh",  # four of a kind: $5 Envy, its chip refused
    0: "Ac Ad Ah As Jk Ks 3d",  # the dealer's five aces: no Envy for anyone
}
CHIPS = {1: 500, 2: 2_500, 3: 60_000}
SF7 = "seven-card-straight-flush-natural"


def write_config(tmp_path: Path, broker: Broker | None) -> Config:
    """An NJ site, one EZ table offering the Dynasty spot on a filed paytable.

    The table is on MQTT with a broker, else simulated in-process (drivers/simulator_source.py)
    for 12 rounds.
    """
    sample = resources.files("controller") / "paytables" / "samples" / "dynasty-sample-nj-1.toml"
    filed = (
        sample.read_text()
        .replace('name = "dynasty-sample-nj-1"', 'name = "house-dynasty-1"')
        .replace("sample = true\n", "")
    )
    (tmp_path / "paytables").mkdir()
    (tmp_path / "paytables" / "house-dynasty-1.toml").write_text(filed)
    text = (
        f'[controller]\nsite = "{SITE}"\nid = "{SITE}"\njournal = "{tmp_path / "journal.db"}"\n'
        'jurisdiction = "nj"\nverification_amount = "$10,000"\npaytable_dirs = ["paytables"]\n\n'
    )
    if broker is not None:
        text += (
            f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive_s = 5\n'
            "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        )
    transport = "mqtt" if broker is not None else "simulator"
    text += (
        f'[[tables]]\nid = "{TABLE}"\ntransport = "{transport}"\ndynasty = "house-dynasty-1"\n'
        'minimum_wager = "$5"\nmaximum_wager = "$500"\n\n'
        f'[web]\nhost = "127.0.0.1"\nport = {free_port()}\n'
    )
    if broker is None:
        text += "\n[simulator]\nrounds = 12\nround_interval_s = 0.01\nseed = 5\n"
    path = tmp_path / "jackpotd.toml"
    path.write_text(text)
    return load_config(path)


def table_settings(broker: Broker) -> BrokerSettings:
    """What the table's MQTT client needs: the site's topic prefix, short backoffs."""
    return BrokerSettings(
        host=broker.host, port=broker.port, site=SITE, keepalive_s=5,
        backoff_initial_s=0.05, backoff_cap_s=0.5,
    )  # fmt: skip


def one_round() -> list[DeviceInput]:
    """What the table's devices publish for the round, in order."""
    seqs: dict[str, int] = {}

    def event(kind: type, device: str, *fields: object) -> DeviceInput:
        seqs[device] = seqs.get(device, 0) + 1
        seq = seqs[device]
        return kind(device_event_id(TABLE, device, seq), AT, TABLE, device, seq, *fields)  # type: ignore[no-any-return]

    events = [event(BetSensed, "sensor", seat, "dynasty", True, c) for seat, c in CHIPS.items()]
    events.append(event(BetsLocked, "console", "r1"))
    for index in range(7):  # round-robin, as a shoe deals
        for position in (1, 2, 3, 0):
            card = HANDS[position].split()[index]
            events.append(event(CardDealt, "shoe", "r1", position, card))
    events.append(event(DealComplete, "shoe", "r1"))
    return events


async def test_13_69f_11_i_dynasty_wager_and_its_envy_settle_through_the_daemon(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, mosquitto)
    (table,) = config.tables
    assert (table.event.dynasty, table.event.dynasty_profile) == ("house-dynasty-1", "nj")
    hits = Topics(SITE).hit(None)  # meter/_/hit: a pending win on no pool
    async with (
        daemon(config) as running,
        probe(mosquitto, hits) as signs,
        MqttTableLink(table_settings(mosquitto), TABLE) as link,
    ):
        await tables_announced(running, [TABLE])
        events = one_round()
        for event in events:
            await link.send(event)
        await running.until_id(events[-1].event_id, "the deal's end journaled")

        payouts = {
            (row["seat"], row["kind"], row["envy_from_seat"]): (
                row["spot"], row["line"], row["win_cents"], row["status"],
            )
            for row in local_journal(running.runtime).db.query("SELECT * FROM payouts ORDER BY seq")
        }  # fmt: skip
        assert payouts == {
            (1, "win", None): ("dynasty", SF7, 2_500_000, "pending"),
            (1, "envy", 3): ("dynasty", "four-of-a-kind", 500, "paid"),
            (2, "win", None): ("dynasty", "flush", 10_000, "paid"),
            (2, "envy", 1): ("dynasty", SF7, 100_000, "paid"),
            (2, "envy", 3): ("dynasty", "four-of-a-kind", 500, "paid"),
        }
        refused = [
            effect
            for row in running.rows()
            for effect in json.loads(row["effects"])
            if effect["effect"] == "wager-refused"
        ]
        assert [(e["seat"], e["spot"], e["amount_cents"]) for e in refused] == [
            (3, "dynasty", 60_000)
        ]

        await signs.until(lambda p: bool(p.payloads(hits)), "the pending win on the signs")
        (shown,) = map(decode_hit, signs.payloads(hits))
        assert (shown.table, shown.seat, shown.amount_cents, shown.pending) == (
            TABLE, 1, 2_500_000, True,
        )  # fmt: skip
        assert shown.hand == "2h 3h 4h 5h 6h 7h 8h"
        await running.stop()
    assert verify(tmp_path / "journal.db").ok


async def test_a_simulated_ez_table_bets_on_the_dynasty_spot_and_is_paid(tmp_path: Path) -> None:
    """The demo's simulated players bet the Dynasty spot of a table that offers it."""
    config = write_config(tmp_path, None)
    stop = asyncio.Event()
    started: asyncio.Queue[Runtime] = asyncio.Queue()
    task = asyncio.create_task(serve(config, stop, started=lambda r, _url: started.put_nowait(r)))
    running = await within(started.get(), "the daemon to start")
    (simulator,) = [s for s in running.sources if isinstance(s, FiniteSource)]
    await within(simulator.finished.wait(), "12 simulated rounds")
    stop.set()
    runtime = await within(task, "the daemon to stop")
    assert runtime is not None
    rows = list(local_journal(runtime).db.query("SELECT spot, kind, wager_cents FROM payouts"))
    runtime.journal.close()
    assert {row["spot"] for row in rows} == {"dynasty"}
    wagers = [row for row in rows if row["kind"] != "envy"]
    assert len(wagers) >= 12
    assert all(500 <= row["wager_cents"] <= 50_000 for row in wagers)  # within the limits
    assert verify(tmp_path / "journal.db").ok
