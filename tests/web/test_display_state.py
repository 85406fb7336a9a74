"""What the display's ``/api/state`` tells a supervisor, against a real daemon.

* Pending pays (awaiting a supervisor's verification) oldest first, each with its time, how
  long it has waited, a label a supervisor reads (``T2 seat 1 · bonus · Five aces``), its hand
  as cards, and whether it is a jackpot; hits are jackpots only.
* Stale must look stale: the document says when the meters stopped being live and why (the
  broker link feeding the controller down, the controller failing closed), and lists the
  health of every broker link and source.
* A table never heard from says so, and a closed table says since when and why (a heartbeat
  timeout, the controller failing closed).
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any

from support.runtime.daemon import broker_settings, daemon, tables_announced, write_config
from support.runtime.floor import within
from support.web.display_rig import demo_floor, state_when

from controller.clock import utc_now
from controller.journal.sqlite import Journal
from controller.web.snapshot import PageState
from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

LABEL = re.compile(r"^T\d seat \d · (jackpot|bonus|envy of seat \d|[a-z-]+)( · \S.*)?$")
TIMEOUT_S = 1.0
"""The tables' heartbeat timeout in the MQTT tests."""


def moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


async def test_pending_pays_are_listed_oldest_first_with_time_age_label_and_cards(
    tmp_path: Path,
) -> None:
    async with daemon(demo_floor(tmp_path, hit_every=2)) as running:
        journal = running.runtime.journal
        await running.until(lambda: len(journal.pending_payouts()) >= 12, "twelve pending pays")
        status, body = await running.get("api/state")
        assert status == 200
    state = json.loads(body)
    pending = state["pending"]
    assert len(pending) >= 12
    times = [moment(row["at"]) for row in pending]
    assert times == sorted(times)
    ages = [row["age_s"] for row in pending]
    assert ages == sorted(ages, reverse=True)
    assert all(0 <= age < 60 for age in ages)
    for row in pending:
        assert LABEL.match(row["label"]), row["label"]
        assert row["label"].startswith(f"{row['table_id']} seat {row['seat']} · {row['wager']}")
        assert "/" not in row["label"]  # the id stays beside it, for jackpotd verify-hit
        assert row["payout_id"].startswith(f"{row['table_id']}/")
        codes = row["hand"].split()
        assert len(row["cards"]) == len(codes) == 7
        for code, card in zip(codes, row["cards"], strict=True):
            if code == "Jk":
                assert card == {"rank": "Joker", "suit": "", "red": False}
            else:
                suit = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}[code[1]]
                rank = "10" if code[0] == "T" else code[0]
                assert card == {"rank": rank, "suit": suit, "red": code[1] in "hd"}
    kinds = {row["wager"] for row in pending}
    assert {"jackpot", "bonus"} <= kinds, kinds
    assert all(row["jackpot"] == (row["wager"] == "jackpot") for row in pending)


async def test_hits_count_jackpots_only_not_pending_bonus_pays(tmp_path: Path) -> None:
    async with daemon(demo_floor(tmp_path, hit_every=3)) as running:
        journal = running.runtime.journal
        await running.until(
            lambda: any(p.line and "bonus" in p.payout_id for p in journal.pending_payouts()),
            "a pending bonus pay",
        )
        await running.stop()  # a still floor, so that the counts are compared at one moment
        state = PageState(running.runtime).snapshot()
        records = journal.verification_records()
    jackpots = {r.payout.payout_id for r in records if r.payout.from_meter_cents > 0}
    # Pays that are not jackpots: bonus pays waiting for verification, and the progressive
    # wager's fixed pays (four of a kind...), which are paid without touching the meter.
    pending_pays = {r.payout.payout_id for r in records if r.payout.status == "pending"}
    fixed = {r.payout.payout_id for r in records if r.payout.kind == "progressive"} - jackpots
    assert pending_pays - jackpots, "the demo's rigged hands pay bonuses that wait too"
    (pool,) = state["pools"]
    assert pool["hits"] == len(jackpots)
    shown = {hit["payout_id"] for hit in state["hits"]}
    assert len(shown) == min(len(jackpots), 25)
    assert shown <= jackpots
    assert not shown & (fixed | pending_pays - jackpots)
    pending = {row["payout_id"]: row for row in state["pending"]}
    assert set(pending) == pending_pays
    assert {p for p, row in pending.items() if row["jackpot"]} == pending_pays & jackpots


async def heartbeating(link: MqttTableLink, stop: asyncio.Event) -> None:
    """The table's console beats every 0.2 s (well inside its timeout) until ``stop``."""
    while not stop.is_set():
        await link.heartbeat(link.table_id, "console")
        try:
            await asyncio.wait_for(stop.wait(), 0.2)
        except TimeoutError:
            continue


def table(state: dict[str, Any], table_id: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [row for row in state["tables"] if row["table"] == table_id]
    (found,) = rows
    return found


async def test_a_table_never_heard_from_says_so_and_a_silent_one_says_since_when_and_why(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(
        tmp_path, broker=mosquitto, mqtt=["t1", "t2"], heartbeat_timeout_s=TIMEOUT_S
    )
    stop_beating = asyncio.Event()
    async with daemon(config) as running, MqttTableLink(broker_settings(mosquitto), "t1") as t1:
        await tables_announced(running, ["t1"])
        beats = asyncio.create_task(heartbeating(t1, stop_beating))
        state = await state_when(
            running, lambda s: table(s, "t1")["heard_s"] is not None, "t1 to be heard"
        )
        assert table(state, "t1")["ever_heard"] is True
        never = table(state, "t2")
        assert (never["ever_heard"], never["heard_s"]) == (False, None)

        stop_beating.set()
        await within(beats, "the heartbeats to stop")
        silent_from = utc_now()
        journal = running.runtime.journal
        await running.until(lambda: not journal.state.table_states["t1"].online, "t1 closed")
        status, body = await running.get("api/state")
        await running.stop()
    assert status == 200
    state = json.loads(body)
    closed = table(state, "t1")
    assert closed["online"] is False
    assert closed["closed"]["why"] == f"heartbeat timeout: silent for more than {TIMEOUT_S:g} s"
    assert moment(closed["closed"]["since"]) >= moment(silent_from)
    assert closed["ever_heard"] is True
    never = table(state, "t2")
    assert (never["ever_heard"], never["heard_s"]) == (False, None)
    assert never["closed"]["why"].startswith("heartbeat timeout: ")


async def test_a_broker_gone_makes_the_meters_stale_and_shows_the_link_down(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    async with daemon(config) as running:
        live = await state_when(
            running,
            lambda s: bool(s["sources"]) and all(source["ok"] for source in s["sources"]),
            "the broker links to connect",
        )
        assert live["stale"] is None
        links = {source["name"]: source for source in live["sources"]}
        assert links["mqtt"]["kind"] == "broker link · table events in"
        assert links["mqtt-display"]["kind"] == "broker link · meters and hits out"

        mosquitto.stop()
        stale = await state_when(running, lambda s: s["stale"] is not None, "stale meters")
        assert "broker link mqtt down" in stale["stale"]["reasons"]
        assert moment(live["at"]) <= moment(stale["stale"]["since"]) <= moment(stale["at"])
        down = {source["name"]: source for source in stale["sources"]}["mqtt"]
        assert down["ok"] is False
        assert down["state"].startswith("down")

        mosquitto.start()
        again = await state_when(
            running,
            lambda s: all(source["ok"] for source in s["sources"]),
            "the broker links to connect again",
        )
        assert again["stale"] is None
        await running.stop()


async def test_the_controller_failing_closed_makes_the_meters_stale_and_closes_every_table(
    tmp_path: Path,
) -> None:
    async with daemon(demo_floor(tmp_path)) as running:
        journal = running.runtime.journal
        assert isinstance(journal, Journal)
        await running.until_more(20, "play")
        journal.db.execute("PRAGMA busy_timeout=20")
        blocker = sqlite3.connect(tmp_path / "demo.db", isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")  # the journal cannot be written
        try:
            state = await state_when(
                running, lambda s: not s["controller"]["online"], "failing closed"
            )
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        stale = state["stale"]
        assert stale is not None
        assert stale["reasons"][0].startswith("the journal cannot be written: ")
        for row in state["tables"]:
            assert row["online"] is False
            assert row["closed"]["why"].startswith("closed by the controller failing closed: ")
            assert moment(row["closed"]["since"]) <= moment(state["at"])
        again = await state_when(running, lambda s: s["stale"] is None, "the journal back")
        assert all(row["closed"] is None for row in again["tables"])
        await running.stop()
