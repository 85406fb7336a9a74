"""``make demo``'s supervisors' console, as a newcomer meets it (README, docs/operations.md).

The demo prints the console's address on its third line, after the display's and the demo
manager's key file: in headless Chromium (a virtual authenticator for the manager's device)
the demo manager starts their own passkey's enrollment at the console, signs it at the command
line with the key file and passphrase the demo printed, through the operator socket the line
names, and then verifies the demo's first pending pay at the console with that passkey. At a
tablet's size, landscape (1280x800) and portrait (768x1024), the pay's button is a touch target
(at least 44 CSS pixels high, as touch guidelines ask). With ``JACKPOTD_SCREENSHOT_DIR=docs/images``
the pictures docs/operations.md shows are saved there (console.png, console-portrait.png,
console-confirm.png).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest
from support.drivers.mosquitto import free_port
from support.web.console_rig import choose, register, virtual_authenticator
from support.web.display_rig import headless

from controller.service.demo import DEMO_MANAGER, DEMO_PASSPHRASE

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
TOUCH_PX = 44
DOCS_SCREENSHOTS: Final = "JACKPOTD_SCREENSHOT_DIR"


async def _shot(page: Page, folder: Path, name: str) -> None:
    """A picture of the page, kept in ``folder``, and copied for the docs when asked."""
    await page.screenshot(path=str(folder / name))
    if docs := os.environ.get(DOCS_SCREENSHOTS):
        shutil.copy(folder / name, Path(docs) / name)


async def test_the_demo_manager_enrolls_a_passkey_and_verifies_a_pay_with_it(
    tmp_path: Path,
) -> None:
    port = free_port()
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "demo", "--tables", "1", "--port", str(port),
         "--interval", "0.05", "--hit-every", "4", "--db", str(tmp_path / "demo.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert daemon.stdout is not None
        lines = [daemon.stdout.readline() for _ in range(3)]
        key = re.search(r"key file (\S+),", lines[1])
        found = re.match(r"supervisors' console: (\S+) .*--socket (\S+) ", lines[2])
        assert key is not None, lines
        assert found is not None, lines
        console, socket = found.group(1), found.group(2)
        assert console == f"http://localhost:{port}/console/"
        async with headless() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await virtual_authenticator(page)
            await page.goto(console)
            await page.wait_for_selector("body[data-loaded=true]")
            await register(page, DEMO_MANAGER, by=DEMO_MANAGER)
            draft = await page.locator("#enroll-draft").get_attribute("data-draft")
            signed = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "controller", "passkey", "enroll", "--socket", socket,
                 "--draft", f"{console}api/drafts/{draft}", "--key", key.group(1)],
                env=os.environ | {"JACKPOTD_PASSPHRASE": DEMO_PASSPHRASE},
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert signed.returncode == 0, signed.stdout + signed.stderr
            await page.locator("#confirm-cancel").click()
            await page.reload()
            await page.wait_for_selector("body[data-loaded=true]")
            await choose(page, DEMO_MANAGER)
            verify = page.locator(".pay button.verify").first
            await verify.wait_for(timeout=WAIT_MS)  # the demo's first pending pay
            for size, name in (((1280, 800), "console.png"), ((768, 1024), "console-portrait.png")):
                await page.set_viewport_size({"width": size[0], "height": size[1]})
                # Measured in one turn of the page: the list is drawn anew at each update the
                # live stream brings, so a button found first may be gone when asked its box.
                height = await page.eval_on_selector(
                    ".pay button.verify", "button => button.getBoundingClientRect().height"
                )
                assert height >= TOUCH_PX, (size, height)
                await _shot(page, tmp_path, name)
            await page.set_viewport_size({"width": 1280, "height": 800})
            await verify.click()
            await page.locator("#confirm-title").get_by_text("Verify this pay").wait_for()
            await _shot(page, tmp_path, "console-confirm.png")
            await page.locator("#confirm-go").click()
            await page.locator("#result").get_by_text("Done: journaled as row").wait_for()
            await page.locator("#confirm-cancel").click()
            await page.locator("#actions").get_by_text("verify-hit · applied").wait_for()
    finally:
        daemon.terminate()
        daemon.communicate(timeout=60)
