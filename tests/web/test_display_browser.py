"""The supervisors' meter display in a real headless Chromium.

The daemon runs the demo's simulated tables; the page must show every pool's meter live (it
changes without a reload), a hit appearing, pending pays with table, seat, hand and amount,
the tables, and the demo's LED sign (an Alpha sign emulated on a pty, fed by the real driver).
It uses no external asset: every request goes to the daemon itself. A screenshot is saved in
the test's temporary directory (the README's comes from tests/web/test_display_layouts.py).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from support.runtime.floor import free_port
from support.web.display_rig import headless

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser


async def test_display_shows_live_meters_and_a_hit_in_headless_chromium(
    tmp_path: Path,
) -> None:
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
        async with headless() as browser:
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
            pending = page.locator("#pending tr").first
            assert "$" in await pending.inner_text()
            assert await pending.locator(".hand .card").count() == 7  # the winning hand
            assert "ONLINE" in await page.locator("#health").inner_text()
            # The demo's virtual LED sign, driven by the real Alpha sign driver over a pty.
            await page.wait_for_function(
                "() => /\\$|JACKPOT/.test(document.querySelector('.sign')?.textContent ?? '')",
                timeout=15_000,
            )
            tables = await page.locator("#tables").inner_text()
            assert all(name in tables for name in ("T1", "T2", "T3"))
            screenshot = tmp_path / "display.png"
            await page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.read_bytes().startswith(b"\x89PNG")
        assert all(request.startswith(url.rstrip("/")) for request in requests), requests
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=30)
    assert daemon.returncode == 0
