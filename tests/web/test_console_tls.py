"""The supervisors' console over HTTPS, its relying party the configuration's, in real Chromium.

docs/operations.md, "The supervisors' console"; docs/security.md, "The console". The daemon
listens on every address (``0.0.0.0``) with a certificate a test CA signed for
``console.test``, ``[web] console_rp_id = "console.test"``. Headless Chromium resolves that
name to 127.0.0.1 and trusts the certificate, so the page is a secure context served by the
display's own TLS: a manager enrolls sup1's passkey on a virtual authenticator, signs the
enrollment with their key file through the operator socket, and sup1 verifies a pay with it.
The enrollment's relying party id and origin are the configured ones; a request whose
``Host`` header names another host drafts the same; a request from another origin is refused;
and a port that other machines reach without TLS does not serve the console at all.
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING

import aiohttp
import pytest
from support.runtime.daemon import daemon
from support.runtime.floor import free_port
from support.web.console_rig import SINGLE, choose, manager_signs, register, virtual_authenticator
from support.web.console_tls import CONSOLE_HOST, certificate, tls_floor, trusting_chromium

from controller.events import PasskeyEnrolled, decode_event
from controller.ledger.passkeys import passkeys_of
from controller.web.console import OFF_PAGE
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    import ssl
    from pathlib import Path

pytestmark = pytest.mark.browser


async def _draft(base: str, tls: ssl.SSLContext, draft: str) -> bytes:
    """``GET /console/api/drafts/{id}`` over the port's TLS, the test CA trusted."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{base}/console/api/drafts/{draft}", ssl=tls) as response,
    ):
        assert response.status == 200
        return await response.read()


async def test_the_console_over_the_display_s_own_https_enrolls_and_verifies_with_a_passkey(
    tmp_path: Path,
) -> None:
    port = free_port()
    made = certificate(tmp_path, CONSOLE_HOST)
    web = (
        f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\ntls_key = "{made.key.name}"\n'
        f'console_rp_id = "{CONSOLE_HOST}"'
    )
    origin = f"https://{CONSOLE_HOST}:{port}"
    with PtyPair() as line:
        config, keys = tls_floor(tmp_path, line.path, port, web)
        socket = tmp_path / "operator.sock"
        async with (
            daemon(config) as running,
            trusting_chromium(made.spki_sha256, CONSOLE_HOST) as browser,
        ):
            assert running.url.startswith("https://")
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await virtual_authenticator(page)
            await page.goto(f"{origin}/console/")
            await page.wait_for_selector("body[data-loaded=true]")
            assert await page.evaluate("window.isSecureContext")
            await register(page, "sup1")
            draft = await page.locator("#enroll-draft").get_attribute("data-draft")
            assert draft
            body = await _draft(f"https://127.0.0.1:{port}", made.client(), draft)
            await asyncio.to_thread(manager_signs, socket, body, keys["mgr"])
            await page.locator("#confirm-cancel").click()
            (passkey,) = passkeys_of(running.runtime.journal.state).values()
            assert (passkey.operator, passkey.rp_id) == ("sup1", CONSOLE_HOST)
            assert list(passkey.origins) == [origin]
            await page.reload()
            await page.wait_for_selector("body[data-loaded=true]")
            await choose(page, "sup1")
            await page.locator(f'.pay[data-payout="{SINGLE}"] button.verify').click()
            await page.locator("#confirm-title").get_by_text("Verify this pay").wait_for()
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("Done: journaled as row").wait_for()
            assert SINGLE not in running.runtime.journal.state.pending


async def test_a_forged_host_header_cannot_choose_the_relying_party_id_nor_another_origin(
    tmp_path: Path,
) -> None:
    port = free_port()
    made = certificate(tmp_path, CONSOLE_HOST)
    web = (
        f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\ntls_key = "{made.key.name}"\n'
        f'console_rp_id = "{CONSOLE_HOST}"'
    )
    origin = f"https://{CONSOLE_HOST}:{port}"
    base = f"https://127.0.0.1:{port}"
    asked = {"operator": "sup1", "label": "sup1's tablet", "by": "mgr"}
    with PtyPair() as line:
        config, _ = tls_floor(tmp_path, line.path, port, web)
        async with daemon(config), aiohttp.ClientSession() as session:
            forged = {"Host": "evil.example", "Origin": origin}
            async with session.post(
                f"{base}/console/api/enroll", json=asked, headers=forged, ssl=made.client()
            ) as response:
                drafted = await response.json()
            assert "draft" in drafted, drafted
            event = decode_event(await _draft(base, made.client(), drafted["draft"]))
            assert isinstance(event, PasskeyEnrolled)
            assert (event.rp_id, list(event.origins)) == (CONSOLE_HOST, [origin])
            assert b"evil.example" not in base64.b64decode(drafted["bytes"])
            elsewhere = {"Host": "evil.example", "Origin": "https://evil.example"}
            async with session.post(
                f"{base}/console/api/enroll", json=asked, headers=elsewhere, ssl=made.client()
            ) as response:
                refused = await response.json()
            assert refused["status"] == "refused"
            assert origin in refused["plain"]


async def test_a_port_other_machines_reach_without_tls_does_not_serve_the_console(
    tmp_path: Path,
) -> None:
    port = free_port()
    with PtyPair() as line:
        config, _ = tls_floor(tmp_path, line.path, port, 'host = "0.0.0.0"')
        assert (config.web.console_rp_id, config.web.console_origin) == ("", "")
        async with daemon(config), aiohttp.ClientSession() as session:
            for path in ("/console/", "/console/api/state"):
                async with session.get(f"http://127.0.0.1:{port}{path}") as response:
                    assert response.status == 503
                    assert await response.text() == OFF_PAGE
            async with session.post(
                f"http://127.0.0.1:{port}/console/api/enroll",
                json={"operator": "sup1", "label": "x", "by": "mgr"},
            ) as response:
                assert response.status == 503
            async with session.get(f"http://127.0.0.1:{port}/api/state") as response:
                assert response.status == 200  # the display itself is served
