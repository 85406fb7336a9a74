"""The daemon end to end with MQTT tables on a real mosquitto: journal, signs and display agree.

The real service runs in-process (tests/support/runtime/daemon.py) and simulated tables play against
it (tests/support/runtime/played_tables.py). The checks are the promises of docs/architecture.md
("The standards it meets", "One event's way through"): every event journaled exactly once, meters
and hits on the signs' topics and on the display equal to the journal, and ``jackpotd verify``
passing after.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from support.runtime.daemon import (
    broker_settings,
    daemon,
    local_journal,
    probe,
    tables_announced,
    write_config,
)
from support.runtime.floor import POOL, SEED_CENTS, within
from support.runtime.played_tables import (
    TOPICS,
    Recorder,
    all_journaled,
    assert_journaled_once,
    play,
    retained_meter,
    simulated,
)

from controller.ledger_journal.sqlite import verify
from drivers.mqtt.outgoing import decode_hit, decode_meter
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker


async def test_mqtt_tables_end_to_end_journal_once_meters_hits_and_display_agree(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """Two tables over a real mosquitto: each event journaled once, signs and display = journal.

    docs/signs.md (signs show the meters live and JACKPOT on a hit), docs/architecture.md (on a
    hit the signs show the winning table and the amount; nothing reaches a sink before it is
    journaled), docs/mqtt.md (QoS 1, persistent sessions, last wills).
    """
    rounds = 12
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"])
    settings = broker_settings(mosquitto)
    hit_filter = f"{TOPICS.prefix}meter/+/hit"
    async with (
        daemon(config) as running,
        probe(mosquitto, hit_filter) as signs,
        MqttTableLink(settings, "t1") as link1,
        MqttTableLink(settings, "t2") as link2,
    ):
        await tables_announced(running, ["t1", "t2"])
        tables = [Recorder(link1), Recorder(link2)]
        simulation = [
            simulated("t1", tables[0], seed=11, hit_every=4),
            simulated("t2", tables[1], seed=12, hit_every=4),
        ]
        await within(play(simulation, rounds), f"{rounds} rounds on two tables")
        await all_journaled(running, tables)

        rows = running.rows()
        assert_journaled_once(rows, tables[0].ids() + tables[1].ids())
        pool = running.runtime.journal.state.pools[POOL]
        assert pool.wagers_count == sum(t.progressive_wagers() for t in tables)

        # Every meter hit (and any payout pending verification) reached the signs, with its
        # amount; fixed progressive pays ($75 for four of a kind) are not announced as jackpots.
        payouts = list(
            local_journal(running.runtime).db.query(
                "SELECT payout_id, table_id, win_cents, from_meter_cents FROM payouts "
                "WHERE from_meter_cents > 0 OR status = 'pending' ORDER BY seq"
            )
        )
        jackpots = [p for p in payouts if p["from_meter_cents"] > 0]
        assert len(jackpots) >= 2, "hit_every deals a jackpot hand every 4th round"
        await signs.until(lambda p: len(p.payloads(hit_filter)) >= len(payouts), "every hit")
        shown = {
            hit.payout: (hit.table, hit.amount_cents, hit.pool)
            for hit in map(decode_hit, signs.payloads(hit_filter))
        }
        assert shown == {p["payout_id"]: (p["table_id"], p["win_cents"], POOL) for p in payouts}

        # The retained meter a sign reads equals the journal's (the sink coalesces: wait for
        # the latest), and so does the display's /api/state.
        expected = (pool.meter_cents, pool.reserve_cents, pool.overflow_cents)
        async with probe(mosquitto, TOPICS.meter(POOL)) as meter_sign:
            await meter_sign.until(
                lambda p: any(
                    (m.meter_cents, m.reserve_cents, m.overflow_cents) == expected
                    for m in map(decode_meter, p.payloads(TOPICS.meter(POOL)))
                ),
                "the sign to show the journal's meter",
            )
        retained, meter = await retained_meter(mosquitto)
        assert retained
        assert (meter.meter_cents, meter.reserve_cents, meter.overflow_cents) == expected
        assert (meter.pool, meter.seed_cents) == (POOL, SEED_CENTS)
        status, body = await running.get("api/state")
        assert status == 200
        state = json.loads(body)
        (shown_pool,) = state["pools"]
        assert (shown_pool["meter_cents"], shown_pool["hits"]) == (pool.meter_cents, len(jackpots))
        assert {(h["table_id"], h["win_cents"]) for h in state["hits"]} == {
            (p["table_id"], p["win_cents"]) for p in jackpots
        }
        assert [t["online"] for t in state["tables"]] == [True, True]
        assert link1.republished == link2.republished == 0
        await running.stop()

    assert verify(tmp_path / "journal.db").ok
