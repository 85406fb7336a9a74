"""Passkeys at the supervisors' console, end to end in real headless Chromium.

docs/operations.md, "The supervisors' console"; docs/security.md, "The console". Chromium's
DevTools WebAuthn virtual authenticator stands for the supervisor's device (CTAP2, internal,
resident keys, user verification). A manager enrolls sup1's passkey: the page registers it over
the digest of the enrollment the server drafted, and the manager signs that enrollment with
their Ed25519 key file through the operator socket, as the CLI does. Then sup1 verifies a pay:
the page shows the amount read from the exact bytes it is asked to sign and the hand, the
authenticator signs their SHA-256, and the server only attaches the assertion and hands the
event in through the same socket. The ledger takes it, the pay is no longer pending, and
``jackpotd verify`` re-checks the journal offline, the assertion with it.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from support.runtime.daemon import daemon
from support.web.console_rig import (
    DUAL,
    SINGLE,
    choose,
    console_floor,
    console_url,
    enroll,
    virtual_authenticator,
)
from support.web.display_rig import headless

from controller.ledger.passkeys import passkeys_of
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser


async def test_a_manager_enrolls_a_passkey_and_the_supervisor_verifies_a_pay_with_it(
    tmp_path: Path,
) -> None:
    with PtyPair() as line:
        config, keys = console_floor(tmp_path, line.path)
        socket = tmp_path / "operator.sock"
        async with daemon(config) as running, headless() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await virtual_authenticator(page)
            url = console_url(running.url)
            await page.goto(url)
            await page.wait_for_selector("body[data-loaded=true]")
            await enroll(page, socket, "sup1", keys["mgr"])
            state = running.runtime.journal.state
            (passkey,) = passkeys_of(state).values()
            assert passkey.operator == "sup1"
            assert passkey.rp_id == "localhost"
            await page.reload()
            await page.wait_for_selector("body[data-loaded=true]")
            await choose(page, "sup1")
            await page.locator(f'.pay[data-payout="{SINGLE}"] button.verify').click()
            await page.locator("#confirm-title").get_by_text("Verify this pay").wait_for()
            assert await page.locator("#confirm-amount").inner_text() == "$1,000.05"
            assert await page.locator("#confirm-hand .card").count() == 7
            assert SINGLE in await page.locator("#confirm-fields").inner_text()
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("Done: journaled as row").wait_for()
            assert SINGLE not in running.runtime.journal.state.pending
            await page.locator("#confirm-cancel").click()
            await page.locator("#actions").get_by_text("verify-hit · applied").wait_for()
    checked = subprocess.run(
        [sys.executable, "-m", "controller", "verify", "--db", str(tmp_path / "journal.db")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_a_pay_at_the_dual_control_amount_takes_two_supervisors_passkeys(
    tmp_path: Path,
) -> None:
    with PtyPair() as line:
        config, keys = console_floor(tmp_path, line.path)
        socket = tmp_path / "operator.sock"
        async with daemon(config) as running, headless() as browser:
            page = await browser.new_page(viewport={"width": 768, "height": 1024})
            await virtual_authenticator(page)
            url = console_url(running.url)
            await page.goto(url)
            await page.wait_for_selector("body[data-loaded=true]")
            for supervisor in ("sup1", "sup2"):
                await enroll(page, socket, supervisor, keys["mgr"])
            await page.reload()
            await page.wait_for_selector("body[data-loaded=true]")
            await choose(page, "sup1")
            await page.locator(f'.pay[data-payout="{DUAL}"] button.verify').click()
            await page.locator("#confirm-needed").get_by_text("Dual control").wait_for()
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("Signed by sup1").wait_for()
            assert DUAL in running.runtime.journal.state.pending  # one signature moves nothing
            await page.locator('#confirm-needed button[data-operator="sup2"]').click()
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("signed by sup1, sup2").wait_for()
            assert DUAL not in running.runtime.journal.state.pending
