"""A held round voided at the supervisors' console, end to end in real headless Chromium.

docs/operations.md, "The supervisors' console"; docs/money.md, "Voids"; docs/faults.md,
"Voids". Table T1's devices are on a real pty serial line (tests/support/runtime/held_round.py):
they lock $1 progressive wagers on two seats, and the shoe sends its first card, resends that frame
(journaled once), then sends the same card again, which cannot be right: the ledger holds the
round for a supervisor. The console lists the held round with its wagers and contributions;
sup1 taps "Void this round", the confirmation repeats the round, the table and the amounts,
and sup1's passkey (Chromium's DevTools WebAuthn virtual authenticator) signs the exact bytes.
The journal then holds the signed ``round-voided``, its wagers returned and their
contributions refunded, every pool back to what it was before the bets, to the fraction of a
cent; the console and the display no longer show the round held, and the table plays on.

The refusals say plain words and move nothing: the table's own device may not void a held round
(only a supervisor or a manager may: controller/ledger/voids.py; both operators' roles may,
controller/ledger/operators.py), the console drafts no void of a round it does not hold, and a
round voided meanwhile (with a key file, through the operator socket) is not voided twice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from support.runtime.daemon import daemon
from support.runtime.floor import CONTRIBUTION_CENTS, WAGER_CENTS
from support.runtime.held_round import DUPLICATE, SEATS, TABLE, TableDevices, table_devices
from support.web.console_rig import (
    choose,
    console_floor,
    console_url,
    enroll,
    ledger_facts,
    opened,
    virtual_authenticator,
)
from support.web.display_rig import headless

from controller.cli.submit import SocketDesk
from controller.events import RoundVoided
from controller.ledger.binding import signed_by
from controller.ledger.table_state import Phase
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from playwright.async_api import Browser, Locator, Page, Route
    from support.runtime.daemon import Daemon

pytestmark = pytest.mark.browser

ROUND = "shoe-7.1"
NEXT_ROUND = "shoe-7.2"
NOTHING_MOVED = "Nothing was paid or changed."
RETURNED = f"${len(SEATS) * WAGER_CENTS // 100}.00"
"""What the void gives back: each seat's $1 progressive wager."""
REFUND = f"$0.{len(SEATS) * CONTRIBUTION_CENTS:02d}"
"""What the wagers added to the pool at progressive-1's 28 %, and the void takes back."""


@dataclass
class Floor:
    """The console's floor: T1's devices on their line, sup1's passkey on the page."""

    browser: Browser
    page: Page
    running: Daemon
    devices: TableDevices
    socket: Path
    keys: dict[str, Ed25519PrivateKey]

    def facts(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every pool's meters and every pending pay, in the journal's state now."""
        return ledger_facts(self.running.runtime.journal.state)

    def rows(self, kind: str) -> list[dict[str, Any]]:
        """The journal's rows of one kind, their event and effects decoded."""
        return [
            {**row, "event": json.loads(row["event"]), "effects": json.loads(row["effects"])}
            for row in self.running.rows()
            if row["kind"] == kind
        ]

    def held(self) -> Locator:
        """The console's entry of the held round."""
        return self.page.locator(f'.held[data-table="{TABLE}"][data-round="{ROUND}"]')

    async def start_void(self) -> None:
        """sup1 taps "Void this round": the confirmation opens."""
        await choose(self.page, "sup1")
        await self.held().locator("button.void").click()
        await self.page.locator("#confirm-title").get_by_text("Void this round").wait_for()

    async def ask_void(self, round_id: str) -> str:
        """The page asks for the void of ``round_id`` (no button offers it): its refusal."""
        await choose(self.page, "sup1")
        body = {"action": "void", "table_id": TABLE, "round_id": round_id, "reason": "by hand"}
        await self.page.evaluate("(body) => start(body, {label: 'asked'})", body)
        await self.page.locator("#confirm-title").get_by_text("Refused").wait_for()
        return await self.page.locator("#result").inner_text()


@pytest.fixture
async def void_floor(tmp_path: Path) -> AsyncIterator[Floor]:
    """The daemon, its console with sup1's passkey enrolled, and T1's devices on the line."""
    with PtyPair() as line:
        config, keys = console_floor(tmp_path, line.path)
        socket = tmp_path / "operator.sock"
        async with (
            daemon(config) as running,
            table_devices(line, running) as devices,
            headless() as browser,
        ):
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await virtual_authenticator(page)
            url = console_url(running.url)
            await opened(page, url)
            await enroll(page, socket, "sup1", keys["mgr"])
            await opened(page, url)
            yield Floor(browser, page, running, devices, socket, keys)


async def test_a_supervisor_voids_a_held_round_with_a_passkey_and_its_contributions_come_back(
    void_floor: Floor, tmp_path: Path
) -> None:
    page, running = void_floor.page, void_floor.running
    before = void_floor.facts()
    reason = await void_floor.devices.hold(ROUND)
    assert reason == f"duplicate card {DUPLICATE} in round {ROUND}"
    assert len(void_floor.rows("card-dealt")) == 2  # the resent frame was journaled once
    assert void_floor.facts() != before  # the locked wagers contributed to the pool

    display = await void_floor.browser.new_page()
    await display.goto(running.url)
    t1 = display.locator("#tables tr", has_text=TABLE)
    await t1.get_by_text(f"HELD: {reason}").wait_for()

    held = void_floor.held()
    await held.get_by_text(f"held: {reason}").wait_for()
    assert await held.locator(".amount").inner_text() == RETURNED
    assert f"{REFUND} off the pool" in await held.inner_text()
    await void_floor.start_void()
    assert await page.locator("#confirm-amount").inner_text() == RETURNED
    words = await page.locator("#confirm-words").inner_text()
    assert f"Void round {ROUND} on table {TABLE}" in words, words
    assert f"({RETURNED} in all)" in words
    assert f"{REFUND}, come off its meters exactly" in words
    assert await page.locator("#confirm-wagers li").count() == len(SEATS)
    fields = await page.locator("#confirm-fields").inner_text()
    assert ROUND in fields
    assert TABLE in fields
    await page.locator("#confirm-go").click()
    await page.locator("#result").get_by_text("Done: journaled as row").wait_for()

    assert void_floor.facts() == before  # every pool back to the fraction of a cent, nothing paid
    state = running.runtime.journal.state
    assert (TABLE, ROUND) not in state.rounds
    assert state.table_states[TABLE].phase is Phase.BETTING
    signed_void_refunded(void_floor)

    await page.locator("#confirm-cancel").click()
    await page.locator("#held").get_by_text("none").wait_for()
    await page.locator("#actions").get_by_text("void · applied · signed by sup1").wait_for()
    await t1.get_by_text("BETTING").wait_for()
    assert "HELD" not in await t1.inner_text()

    await void_floor.devices.play(NEXT_ROUND)  # the table plays on
    pool = running.runtime.journal.state.pools["floor"]
    assert pool.meter == before[0]["floor"].meter + len(SEATS) * CONTRIBUTION_CENTS
    await running.stop()
    checked = subprocess.run(
        [sys.executable, "-m", "controller", "verify", "--db", str(tmp_path / "journal.db")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def signed_void_refunded(void_floor: Floor) -> None:
    """The journal's one void: sup1's passkey signed it, each seat's wager and contribution back."""
    (voided,) = void_floor.rows("round-voided")
    assert voided["outcome"] == "applied", voided["reason"]
    event = voided["event"]
    assert (event["table_id"], event["round_id"], event["by"]) == (TABLE, ROUND, "sup1")
    assert event["refund_contributions"] is True
    (signature,) = event["signatures"]
    assert signature["operator"] == "sup1"
    assert signature["webauthn"]["credential_id"]
    effects = voided["effects"]
    refunds = [effect for effect in effects if effect["effect"] == "contribution-refunded"]
    assert sorted(refund["seat"] for refund in refunds) == list(SEATS)
    for refund in refunds:
        assert refund["wager_cents"] == WAGER_CENTS
        assert refund["from_meter"] == str(CONTRIBUTION_CENTS)
    returned = [e for e in effects if e["effect"] == "payout" and e.get("kind") == "void"]
    assert len(returned) == len(SEATS), effects


async def test_the_tables_own_device_may_not_void_a_held_round(void_floor: Floor) -> None:
    await void_floor.devices.hold(ROUND)
    held = void_floor.facts()
    answer = await void_floor.devices.void(ROUND)
    assert answer is not None
    assert answer.startswith("ACK,")  # durable: journaled, as refused
    (refused,) = void_floor.rows("round-voided")
    assert refused["outcome"] == "rejected"
    assert "only a supervisor may void it" in refused["reason"]
    assert void_floor.facts() == held
    assert void_floor.devices.phase() is Phase.HELD
    await void_floor.page.reload()
    await void_floor.held().locator("button.void").wait_for()  # still the supervisor's to void


async def test_the_console_drafts_no_void_of_a_round_it_does_not_hold(void_floor: Floor) -> None:
    devices = void_floor.devices
    await devices.betting(ROUND)
    await devices.send(devices.card(ROUND, 0, DUPLICATE))  # being dealt, not held
    before = void_floor.facts()
    text = await void_floor.ask_void(ROUND)
    assert f"Round {ROUND} on table {TABLE} is not held" in text, text
    assert NOTHING_MOVED in text
    await void_floor.page.locator("#confirm-cancel").click()
    text = await void_floor.ask_void("shoe-6.9")
    assert f"Round shoe-6.9 is not open on table {TABLE}" in text, text
    assert NOTHING_MOVED in text
    assert void_floor.facts() == before
    assert (TABLE, ROUND) in void_floor.running.runtime.journal.state.rounds
    assert devices.phase() is Phase.DEALING
    assert not void_floor.rows("round-voided")


def void_with_a_key_file(socket: Path, key: Ed25519PrivateKey) -> None:
    """sup2 voids the held round with their key file through the operator socket (the CLI's)."""
    desk = SocketDesk(socket)
    event = RoundVoided(
        "void-by-sup2", desk.now(), TABLE, ROUND, "sup2", "voided at the pit desk",
        refund_contributions=True,
    )  # fmt: skip
    receipt = desk.submit(signed_by(desk.state, event, [("sup2", key)]), "void")
    assert receipt.outcome == "applied", receipt.reason


async def test_a_round_voided_while_its_void_is_open_at_the_console_is_not_voided_twice(
    void_floor: Floor,
) -> None:
    before = void_floor.facts()
    await void_floor.devices.hold(ROUND)
    await void_floor.held().wait_for()
    await void_floor.start_void()
    await asyncio.to_thread(void_with_a_key_file, void_floor.socket, void_floor.keys["sup2"])
    assert void_floor.facts() == before
    await void_floor.page.locator("#confirm-go").click()
    result = void_floor.page.locator("#result")
    await result.get_by_text("Refused.").wait_for()
    text = await result.inner_text()
    assert "This round is not open any more: it was voided or settled already." in text, text
    assert NOTHING_MOVED in text
    assert void_floor.facts() == before
    voids = void_floor.rows("round-voided")
    assert [row["outcome"] for row in voids] == ["applied", "rejected"]
    await void_floor.page.locator("#confirm-cancel").click()
    text = await void_floor.ask_void(ROUND)
    assert f"Round {ROUND} is not open on table {TABLE}: it was voided or settled" in text, text


async def test_a_confirmation_given_another_rounds_amounts_says_so_and_signs_nothing(
    void_floor: Floor,
) -> None:
    """The round and table the page shows amounts for are the ones in the bytes to be signed."""

    async def other_round(route: Route) -> None:
        response = await route.fetch()
        drafted = await response.json()
        drafted["round"]["round_id"] = "shoe-6.9"
        await route.fulfill(response=response, json=drafted)

    await void_floor.devices.hold(ROUND)
    held = void_floor.facts()
    await void_floor.held().wait_for()
    await void_floor.page.route("**/console/api/draft", other_round)
    await choose(void_floor.page, "sup1")
    await void_floor.held().locator("button.void").click()
    await void_floor.page.locator("#confirm-title").get_by_text("Refused").wait_for()
    text = await void_floor.page.locator("#result").inner_text()
    assert "The console gave the amounts of another round" in text, text
    assert NOTHING_MOVED in text
    assert await void_floor.page.locator("#confirm-go").is_hidden()
    assert void_floor.facts() == held
    assert void_floor.devices.phase() is Phase.HELD
