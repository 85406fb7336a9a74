"""A manager's own passkey signs another operator's enrollment at the console, in real Chromium.

docs/operations.md, "The supervisors' console" ("Enrolling a passkey": the manager signs with
their own key file, or with their own passkey). The manager's passkey is enrolled first (their
key file signs it, tests/support/web/console_rig.py); then sup1's device registers sup1's passkey,
and the manager confirms the enrollment on the page with their passkey: no key file, no
command line. The ledger takes the enrollment with the manager's WebAuthn signature, and sup1
then verifies a pay with the passkey so enrolled.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from support.runtime.daemon import daemon
from support.runtime.floor import journal_rows
from support.web.console_rig import (
    SINGLE,
    choose,
    console_floor,
    console_url,
    enroll,
    opened,
    register,
    virtual_authenticator,
)
from support.web.display_rig import headless

from controller.ledger.passkeys import passkeys_of
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser


async def test_a_manager_s_own_passkey_signs_a_supervisor_s_enrollment_in_the_browser(
    tmp_path: Path,
) -> None:
    with PtyPair() as line:
        config, keys = console_floor(tmp_path, line.path)
        socket = tmp_path / "operator.sock"
        async with daemon(config) as running, headless() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await virtual_authenticator(page)
            url = console_url(running.url)
            await opened(page, url)
            await enroll(page, socket, "mgr", keys["mgr"])  # the manager's own, by key file
            await opened(page, url)
            await register(page, "sup1")
            await (
                page.locator("#result")
                .get_by_text("the manager confirms with their passkey")
                .wait_for()
            )
            await page.locator("#confirm-title").get_by_text("Enroll this passkey").wait_for()
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("Done: journaled as row").wait_for()
            state = running.runtime.journal.state
            owners = sorted(passkey.operator for passkey in passkeys_of(state).values())
            assert owners == ["mgr", "sup1"]
            written = [
                json.loads(row["event"])
                for row in journal_rows(tmp_path / "journal.db")
                if row["kind"] == "passkey-enrolled"
            ]
            (enrolled,) = [event for event in written if event["operator"] == "sup1"]
            (signature,) = enrolled["signatures"]
            assert signature["operator"] == "mgr"
            assert signature["webauthn"]["credential_id"] in passkeys_of(state)
            assert passkeys_of(state)[signature["webauthn"]["credential_id"]].operator == "mgr"
            await page.locator("#confirm-cancel").click()
            await opened(page, url)
            await choose(page, "sup1")
            await page.locator(f'.pay[data-payout="{SINGLE}"] button.verify').click()
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("Done: journaled as row").wait_for()
            assert SINGLE not in running.runtime.journal.state.pending
