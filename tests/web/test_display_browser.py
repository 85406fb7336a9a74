"""The supervisors' meter display in a real headless Chromium.

The daemon runs the demo's simulated tables; the page must show every pool's meter live (it
changes without a reload), a hit appearing, pending jackpots with table, seat, hand and amount,
the tables, and the demo's LED sign (an Alpha sign emulated on a pty, fed by the real driver).
It uses no external asset: every request goes to the daemon itself. A screenshot is saved
(``JACKPOTD_SCREENSHOT`` names where; the README shows one).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

pytestmark = pytest.mark.browser

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_display_shows_live_meters_and_a_hit_in_headless_chromium(
    tmp_path: Path,
) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium is not None, "chromium is missing: make test installs it"
    port = free_port()
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "demo", "--port", str(port), "--interval", "0.05",
         "--hit-every", "4", "--db", str(tmp_path / "demo.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert daemon.stdout is not None
        url = daemon.stdout.readline().rsplit(" ", 1)[1].strip()
        requests: list[str] = []
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=chromium, args=CHROMIUM_FLAGS
            )
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("request", lambda request: requests.append(request.url))
            await page.goto(url)
            meter = page.locator(".pool .meter").first
            await meter.wait_for(timeout=15_000)
            first = await meter.inner_text()
            assert first.startswith("$")
            await page.wait_for_function(
                "first => document.querySelector('.pool .meter').textContent !== first",
                arg=first,
                timeout=15_000,
            )
            await page.wait_for_function(
                "() => !document.querySelector('#hits').textContent.includes('none yet')",
                timeout=30_000,
            )
            hits = await page.locator("#hits tr").count()
            assert hits >= 1
            await page.wait_for_function(
                "() => !document.querySelector('#pending').textContent.includes('none')",
                timeout=30_000,
            )
            pending = await page.locator("#pending tr").first.inner_text()
            assert "$" in pending
            assert any(code in pending for code in ("Jk", "Ac", "3c", "9h"))  # the winning hand
            assert "ONLINE" in await page.locator("#health").inner_text()
            # The demo's virtual LED sign, driven by the real Alpha sign driver over a pty.
            await page.wait_for_function(
                "() => /\\$|JACKPOT/.test(document.querySelector('.sign')?.textContent ?? '')",
                timeout=15_000,
            )
            tables = await page.locator("#tables").inner_text()
            assert all(name in tables for name in ("T1", "T2", "T3"))
            screenshot = Path(os.environ.get("JACKPOTD_SCREENSHOT", tmp_path / "display.png"))
            await page.screenshot(path=str(screenshot), full_page=True)
            await browser.close()
        assert screenshot.read_bytes().startswith(b"\x89PNG")
        assert all(request.startswith(url.rstrip("/")) for request in requests), requests
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=30)
    assert daemon.returncode == 0
