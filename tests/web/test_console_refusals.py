"""The console's refusals, in real headless Chromium: plain words on the page, nothing moved.

docs/security.md, "The console": the web server relays and the ledger judges. Each test makes
one attack a compromised server or a copied device could try, through the page itself, and
checks that the page says in plain words what happened and that the journal's meters and
pending pays are exactly as before (read from the daemon's journal state):

* an assertion made for one pay, moved by the server onto the draft of another pay (the
  request rewritten on its way with ``page.route``): its challenge is the other action's;
* the browser's client data altered on its way: the signature no longer checks out;
* an authenticator whose sign count goes back (the credential's key copied onto a device that
  counts from lower, through the DevTools WebAuthn domain): refused as a suspected clone, the
  alert journaled by the daemon right after the refusal and counted by its gauge until a
  manager revokes the passkey;
* a passkey a manager revoked (through the operator socket) while its draft was open;
* a supervisor signing a manager's action (unlocking an operator: the ledger's roles,
  controller/ledger/operators.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from support.runtime.daemon import daemon, metric
from support.web.console_rig import (
    OTHER_SINGLE,
    SINGLE,
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
from controller.events import decode_event
from controller.ledger.binding import signed_by
from controller.ledger.passkeys import passkeys_of
from controller.passkey_events import PasskeyCloneSuspected, PasskeyRevoked
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from playwright.async_api import CDPSession, Page, Request, Route
    from support.runtime.daemon import Daemon

pytestmark = pytest.mark.browser


class Floor:
    """The console's floor with sup1's passkey enrolled on the page's virtual authenticator."""

    def __init__(
        self, page: Page, running: Daemon, session: CDPSession, authenticator: str, socket: Path
    ) -> None:
        self.page = page
        self.running = running
        self.session = session
        self.authenticator = authenticator
        self.socket = socket

    def facts(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The journal's meters and pending pays now."""
        return ledger_facts(self.running.runtime.journal.state)

    async def start_verify(self, payout_id: str) -> None:
        """sup1 opens the confirmation of a pay."""
        await choose(self.page, "sup1")
        await self.page.locator(f'.pay[data-payout="{payout_id}"] button.verify').click()
        await self.page.locator("#confirm-title").get_by_text("Verify this pay").wait_for()

    async def refused(self, words: str) -> str:
        """Confirm: the page's refusal in plain words (its whole text), and nothing moved."""
        before = self.facts()
        await self.page.locator("#confirm-go").click()
        result = self.page.locator("#result")
        await result.get_by_text("Refused.").wait_for()
        text = await result.inner_text()
        assert words in text, text
        assert "Nothing was paid or changed." in text
        assert self.facts() == before
        return text


@pytest.fixture
async def refusing_floor(
    tmp_path: Path,
) -> AsyncIterator[tuple[Floor, dict[str, Ed25519PrivateKey]]]:
    """A running daemon and its console, sup1's passkey enrolled by the manager."""
    with PtyPair() as line:
        config, keys = console_floor(tmp_path, line.path)
        socket = tmp_path / "operator.sock"
        async with daemon(config) as running, headless() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            session, authenticator = await virtual_authenticator(page)
            url = console_url(running.url)
            await opened(page, url)
            await enroll(page, socket, "sup1", keys["mgr"])
            await opened(page, url)
            yield Floor(page, running, session, authenticator, socket), keys


async def draft_verify(page: Page, payout_id: str, by: str) -> str:
    """Another draft, asked of the server directly: the verification of ``payout_id``."""
    base = page.url.split("/console/")[0]
    body = {"action": "verify-hit", "payout_id": payout_id, "by": by}
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/console/api/draft", json=body) as response,
    ):
        drafted = await response.json()
    return str(drafted["draft"])


async def test_an_assertion_for_one_pay_moved_onto_another_pays_draft_is_refused(
    refusing_floor: tuple[Floor, dict[str, Ed25519PrivateKey]],
) -> None:
    here, _ = refusing_floor
    other = await draft_verify(here.page, OTHER_SINGLE, "sup1")

    async def moved(route: Route, request: Request) -> None:
        body = json.loads(request.post_data or "{}")
        body["draft"] = other
        await route.continue_(post_data=json.dumps(body))

    await here.page.route("**/console/api/sign", moved)
    await here.start_verify(SINGLE)
    await here.refused("This signature was made for another action, not this one.")
    assert {SINGLE, OTHER_SINGLE} <= set(here.running.runtime.journal.state.pending)


async def test_client_data_altered_on_its_way_is_refused(
    refusing_floor: tuple[Floor, dict[str, Ed25519PrivateKey]],
) -> None:
    here, _ = refusing_floor

    async def altered(route: Route, request: Request) -> None:
        body = json.loads(request.post_data or "{}")
        text = body["client_data_json"]
        client = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        client["crossOrigin"] = False
        client["tokenBinding"] = {"status": "supported"}
        raw = json.dumps(client, separators=(",", ":")).encode()
        body["client_data_json"] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        await route.continue_(post_data=json.dumps(body))

    await here.page.route("**/console/api/sign", altered)
    await here.start_verify(SINGLE)
    await here.refused("The signature does not check out")
    assert SINGLE in here.running.runtime.journal.state.pending


async def test_an_authenticator_whose_sign_count_goes_back_is_refused_as_a_suspected_clone(
    refusing_floor: tuple[Floor, dict[str, Ed25519PrivateKey]],
) -> None:
    here, keys = refusing_floor
    await here.start_verify(SINGLE)
    await here.page.locator("#confirm-go").click()
    await here.page.locator("#result").get_by_text("Done: journaled as row").wait_for()
    await here.page.locator("#confirm-cancel").click()
    which = {"authenticatorId": here.authenticator}
    (credential,) = (await here.session.send("WebAuthn.getCredentials", which))["credentials"]
    assert credential["signCount"] > 0
    await here.session.send(
        "WebAuthn.removeCredential", {**which, "credentialId": credential["credentialId"]}
    )
    copied = {**credential, "signCount": 0}
    await here.session.send("WebAuthn.addCredential", {**which, "credential": copied})
    await here.start_verify(OTHER_SINGLE)
    await here.refused("This passkey's counter went back: it may have been copied.")
    ((credential_id, passkey),) = passkeys_of(here.running.runtime.journal.state).items()
    assert passkey.sign_count > 0  # the last count the ledger took stands
    # The daemon journaled the alert right after the refused row: the credential is held.
    assert passkey.clone_suspected is not None
    assert passkey.clone_suspected <= passkey.sign_count
    rows = here.running.rows()
    (alert_row,) = [row for row in rows if row["kind"] == "passkey-clone-suspected"]
    (refused_row,) = [row for row in rows if row["seq"] == alert_row["seq"] - 1]
    assert alert_row["outcome"] == "applied", alert_row["reason"]
    assert (refused_row["kind"], refused_row["outcome"]) == ("hit-verified", "rejected")
    assert "passkey-clone:" in refused_row["reason"], refused_row["reason"]
    alert = decode_event(alert_row["event"])
    assert isinstance(alert, PasskeyCloneSuspected)
    assert alert.credential_id == credential_id
    assert alert.evidence == refused_row["event"]
    assert alert_row["event_id"] == f"{refused_row['event_id']}#passkey-clone-{credential_id[:16]}"
    assert await clones_suspected(here) == 1
    # Held until a manager revokes it, which takes it off the gauge.
    await asyncio.to_thread(revoke, here.socket, credential_id, keys["mgr"])
    assert await clones_suspected(here) == 0


async def clones_suspected(here: Floor) -> float:
    """The daemon's ``jackpotd_passkeys_clone_suspected``, scraped from its /metrics."""
    status, text = await here.running.get("metrics")
    assert status == 200, text
    assert "# TYPE jackpotd_passkeys_clone_suspected gauge" in text
    return metric(text, "jackpotd_passkeys_clone_suspected")


def revoke(socket: Path, credential: str, key: Ed25519PrivateKey) -> None:
    """The manager revokes a passkey with their key file, through the operator socket."""
    desk = SocketDesk(socket)
    event = PasskeyRevoked("revoke-lost-tablet", desk.now(), credential, "mgr", "tablet lost")
    receipt = desk.submit(signed_by(desk.state, event, [("mgr", key)]), "passkey revoke")
    assert receipt.outcome == "applied", receipt.reason


async def test_a_passkey_revoked_while_its_draft_is_open_is_refused(
    refusing_floor: tuple[Floor, dict[str, Ed25519PrivateKey]],
) -> None:
    here, keys = refusing_floor
    (credential,) = passkeys_of(here.running.runtime.journal.state)
    await here.start_verify(SINGLE)
    await asyncio.to_thread(revoke, here.socket, credential, keys["mgr"])
    await here.refused("This passkey was revoked: it cannot sign.")
    assert SINGLE in here.running.runtime.journal.state.pending


async def test_a_supervisor_signing_a_managers_action_is_refused(
    refusing_floor: tuple[Floor, dict[str, Ed25519PrivateKey]],
) -> None:
    here, _ = refusing_floor
    await choose(here.page, "sup1")
    await here.page.locator('#operators button.unlock[data-operator="sup2"]').click()
    await here.page.locator("#confirm-title").get_by_text("Unlock this operator").wait_for()
    operators = dict(here.running.runtime.journal.state.operators)
    text = await here.refused("Your role may not do this: a manager signs it.")
    assert "supervisor" in text
    assert dict(here.running.runtime.journal.state.operators) == operators
