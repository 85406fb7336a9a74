"""A genuine hit replayed within its five minutes, after the sign station restarted, is not shown.

docs/security.md, "A hit replayed after a restart". The follower shows a hit only if it is the
controller's, its pool's and under five minutes old, and each payout once (drivers/mqtt/hits.py).
The payouts shown used to be kept in memory only: a station that restarted (a crash, an update,
a power cut) forgot them, and a device with broker credentials that had captured a genuine hit
could publish it again within its five minutes and make every sign of the pool celebrate it a
second time. With a file for the payouts shown (``hits_seen``), each written and flushed before
its hit is shown, the restarted station reads them back and the replay is a repeat. On a real
mosquitto, the real sink as the controller, the real Alpha sign driver on an emulated sign's pty;
the same replay to a station without the file is shown again, which is the attack.
"""

from __future__ import annotations

import asyncio
import stat
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from support.drivers.mqtt_tables import TOPICS, settings_for, watch
from support.drivers.shown_hits import (
    GENUINE,
    ShownFollower,
    hit,
    hits_shown,
    intruder_publishes,
)
from support.drivers.sign_station import (
    KEYS,
    POOL,
    controller_node,
    meter,
    mqtt_sign,
    settled,
    until,
)

from controller.backoff import Backoff
from controller.clock import utc_iso
from controller.meter_signature import HIT_MAX_AGE_S
from drivers.mqtt.hits import SeenHits

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.ledger_journal.sqlite import Journal

PAYOUT = "t1/r-1/3/progressive"


def station(port: int, seen: Path | None) -> ShownFollower:
    follower = ShownFollower(
        settings_for(port), client_id="sign-pit-2", pools=[POOL], backoff=Backoff(0.02, 0.2),
        timeout_s=2.0, keys=KEYS, hits_seen=seen,
    )  # fmt: skip
    follower.shown = []
    return follower


def shown_then_replayed_after_a_restart(
    port: int, journal: Journal, seen: Path | None
) -> tuple[ShownFollower, ShownFollower]:
    """A hit shown by a station, which restarts; the hit captured is published again at once."""
    first = station(port, seen)
    restarted: list[ShownFollower] = []
    captured: list[bytes] = []

    async def scenario() -> None:
        topic = TOPICS.hit(POOL)
        async with watch(port, topic) as probe:
            async with mqtt_sign(first) as face, controller_node(port, "node-1", journal) as leader:
                leader.put_nowait(meter(10_00, 6, epoch=1))
                await settled(face, "$10.00")
                leader.put_nowait(hit(PAYOUT, 250_00))
                await settled(face, GENUINE)
                await probe.until(lambda w: bool(w.payloads(topic)), "the hit captured")
            captured.append(probe.payloads(topic)[0])
        # The station restarts (a new process: nothing of the first in memory).
        restarted.append(second := station(port, seen))
        async with mqtt_sign(second) as face, controller_node(port, "node-1", journal) as leader:
            leader.put_nowait(meter(10_00, 8, epoch=1))
            await settled(face, "$10.00")
            await intruder_publishes(port, topic, captured[0])
            await until(
                lambda: second.hits.repeated == 1 or bool(hits_shown(second)), "the replay taken"
            )

    asyncio.run(scenario())
    return first, restarted[0]


def test_a_hit_replayed_within_its_window_after_a_restart_is_a_repeat_never_shown(
    mosquitto: Broker, journal: Journal, tmp_path: Path
) -> None:
    seen = tmp_path / "hits-seen.jsonl"
    first, second = shown_then_replayed_after_a_restart(mosquitto.port, journal, seen)
    assert [shown.payout_id for shown in hits_shown(first)] == [PAYOUT]
    assert hits_shown(second) == []  # the signs of the restarted station never celebrated it
    assert (second.hits.repeated, second.hits_refused) == (1, 0)
    assert stat.S_IMODE(seen.stat().st_mode) == 0o640


def test_without_the_file_the_restarted_station_shows_the_replay_again(
    mosquitto: Broker, journal: Journal
) -> None:
    """The attack, as it stood: the payouts shown were in memory only."""
    first, second = shown_then_replayed_after_a_restart(mosquitto.port, journal, None)
    assert [shown.payout_id for shown in hits_shown(first)] == [PAYOUT]
    assert [shown.payout_id for shown in hits_shown(second)] == [PAYOUT]


def test_the_file_keeps_only_the_hits_within_the_age_and_passes_over_a_line_cut_short(
    tmp_path: Path,
) -> None:
    now = datetime.now(UTC)
    path = tmp_path / "hits-seen.jsonl"
    seen = SeenHits(path, HIT_MAX_AGE_S, lambda: now)
    seen.add("t1/r-0/1/progressive", utc_iso(now - timedelta(seconds=HIT_MAX_AGE_S + 1)))
    seen.add("t1/r-1/1/progressive", utc_iso(now - timedelta(seconds=10)))
    with path.open("ab") as out:
        out.write(b'{"payout":"t1/r-2/1/progr')  # a crash while its line was written
    assert SeenHits(path, HIT_MAX_AGE_S, lambda: now).read() == ["t1/r-1/1/progressive"]
    assert path.read_bytes().count(b"\n") == 1  # rewritten with only what still counts
