"""The faults journaled, acknowledged at the supervisors' console, in real headless Chromium.

docs/operations.md, "Acknowledging faults"; docs/faults.md, "Acknowledging faults". The daemon
runs in-process with its operator socket (tests/support/web/console_rig.py); faults are made as a
floor makes them, by requests the operator socket refuses before the ledger (each journaled as
a fault). The console's Faults panel lists them with their time, source and reason; sup1 taps
"Acknowledge", the confirmation says how many and through which fault, read from the bytes to
be signed, and sup1's passkey (Chromium's DevTools WebAuthn virtual authenticator) signs them.
The journal then holds the signed ``faults-acknowledged``, and the ledger's register says who
acknowledged through which fault. A fault journaled while the confirmation is open makes the
acknowledgement stale: refused in plain words, journaled as refused, nothing changed.
"""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from support.runtime.daemon import daemon
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
from controller.events import FaultsAcknowledged
from controller.ledger.binding import signed_by
from controller.ledger.faults import register_of
from controller.runtime.operator_desk import LENGTH
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from playwright.async_api import Page
    from support.runtime.daemon import Daemon

pytestmark = pytest.mark.browser

NOTHING_MOVED = "Nothing was paid or changed."


@dataclass
class Floor:
    """The console with sup1's passkey, and the daemon whose operator socket makes faults."""

    page: Page
    running: Daemon
    socket: Path
    keys: dict[str, Ed25519PrivateKey]

    def faults(self) -> list[dict[str, Any]]:
        """The journal's fault rows, their events decoded."""
        return [
            {**row, "event": json.loads(row["event"])}
            for row in self.running.rows()
            if row["kind"] == "fault"
        ]

    def acknowledgements(self) -> list[dict[str, Any]]:
        """The journal's acknowledgements, applied or refused, their events decoded."""
        return [
            {**row, "event": json.loads(row["event"])}
            for row in self.running.rows()
            if row["kind"] == "faults-acknowledged"
        ]

    def _bad_request(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(30)
            connection.connect(str(self.socket))
            connection.sendall(LENGTH.pack(7) + b"{broken")
            (length,) = LENGTH.unpack(connection.recv(4, socket.MSG_WAITALL))
            connection.recv(length, socket.MSG_WAITALL)

    def acknowledge_with_a_key_file(self, through: str) -> None:
        """sup2 acknowledges every fault through ``through`` with their key file (the CLI's way)."""
        desk = SocketDesk(self.socket)
        count = len(self.faults())
        event = FaultsAcknowledged("faults-ack-by-sup2", desk.now(), through, count, "seen", "sup2")
        signed = signed_by(desk.state, event, [("sup2", self.keys["sup2"])])
        receipt = desk.submit(signed, "fault ack")
        assert receipt.outcome == "applied", receipt.reason

    async def fault(self) -> str:
        """A request the socket refuses: one more fault journaled; its id."""
        before = len(self.faults())
        await asyncio.to_thread(self._bad_request)
        made = self.faults()
        assert len(made) == before + 1
        return str(made[-1]["event_id"])


@pytest.fixture
async def faults_floor(tmp_path: Path) -> AsyncIterator[Floor]:
    """The daemon and its console, sup1's passkey enrolled on the page's authenticator."""
    with PtyPair() as line:
        config, keys = console_floor(tmp_path, line.path)
        path = tmp_path / "operator.sock"
        async with daemon(config) as running, headless() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await virtual_authenticator(page)
            url = console_url(running.url)
            await opened(page, url)
            await enroll(page, path, "sup1", keys["mgr"])
            await opened(page, url)
            yield Floor(page, running, path, keys)


async def test_a_supervisor_acknowledges_the_faults_listed_with_a_passkey(
    faults_floor: Floor,
) -> None:
    page = faults_floor.page
    before = ledger_facts(faults_floor.running.runtime.journal.state)
    await faults_floor.fault()
    newest = await faults_floor.fault()
    waiting = len(faults_floor.faults())  # every fault journaled, none acknowledged yet
    await page.reload()
    listed = page.locator(f'.fault[data-fault="{newest}"]')
    await listed.wait_for()
    text = await listed.inner_text()
    assert "operator-socket uid=" in text
    assert "operator-malformed" in text
    assert f"{waiting} fault(s) waiting" in await page.locator("#faults-count").inner_text()

    await choose(page, "sup1")
    await page.locator("#faults-note").fill("socket probes seen; the pit desk's script fixed")
    await page.locator("#faults-go").click()
    await page.locator("#confirm-title").get_by_text("Acknowledge these faults").wait_for()
    words = await page.locator("#confirm-words").inner_text()
    assert f"Acknowledge {waiting} fault(s)" in words, words
    assert f"up to and including {newest}" in words
    fields = await page.locator("#confirm-fields").inner_text()
    assert newest in fields
    assert "the pit desk's script fixed" in fields
    await page.locator("#confirm-go").click()
    await page.locator("#result").get_by_text("Done: journaled as row").wait_for()

    (row,) = faults_floor.acknowledgements()
    assert row["outcome"] == "applied", row["reason"]
    event = row["event"]
    assert (event["through"], event["count"], event["by"]) == (newest, waiting, "sup1")
    (signature,) = event["signatures"]
    assert signature["webauthn"]["credential_id"]
    register = register_of(faults_floor.running.runtime.journal.state)
    assert register is not None
    assert (register.through, register.by, register.waiting) == (newest, "sup1", 0)
    assert ledger_facts(faults_floor.running.runtime.journal.state) == before  # nothing moved

    await page.locator("#confirm-cancel").click()
    await page.locator("#faults").get_by_text("none waiting").wait_for()
    last = page.locator("#faults-last")
    await last.get_by_text(f"acknowledged through {newest} by sup1").wait_for()
    assert await page.locator("#faults-ack").is_hidden()


async def test_a_fault_journaled_while_the_confirmation_is_open_makes_it_stale(
    faults_floor: Floor,
) -> None:
    page = faults_floor.page
    await asyncio.to_thread(faults_floor.acknowledge_with_a_key_file, await faults_floor.fault())
    seen = await faults_floor.fault()
    await page.reload()
    await page.locator(f'.fault[data-fault="{seen}"]').wait_for()
    await choose(page, "sup1")
    await page.locator("#faults-go").click()
    await page.locator("#confirm-title").get_by_text("Acknowledge these faults").wait_for()
    later = await faults_floor.fault()  # the controller journals another fault meanwhile
    await page.locator("#confirm-go").click()
    result = page.locator("#result")
    await result.get_by_text("Refused.").wait_for()
    text = await result.inner_text()
    assert "Another fault was journaled since this was drafted" in text, text
    assert NOTHING_MOVED in text
    first, refused = faults_floor.acknowledgements()
    assert (first["outcome"], refused["outcome"]) == ("applied", "rejected")
    register = register_of(faults_floor.running.runtime.journal.state)
    assert register is not None
    assert (register.by, register.waiting) == ("sup2", 2)  # nothing more acknowledged

    await page.locator("#confirm-cancel").click()
    await page.locator(f'.fault[data-fault="{later}"]').wait_for()
    await page.locator("#faults-go").click()  # the list again: through the newest, now taken
    await page.locator("#confirm-title").get_by_text("Acknowledge these faults").wait_for()
    assert later in await page.locator("#confirm-fields").inner_text()
    await page.locator("#confirm-go").click()
    await result.get_by_text("Done: journaled as row").wait_for()
    register = register_of(faults_floor.running.runtime.journal.state)
    assert register is not None
    assert (register.through, register.by, register.waiting) == (later, "sup1", 0)
