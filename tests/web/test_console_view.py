"""The supervisors' console, read only, in real headless Chromium at a tablet's two sizes.

docs/operations.md, "The supervisors' console": the pending pays with their hands drawn as
cards, the seat, the line and the amount; the tables and their state; the last actions. The
page is served beside the display by the daemon itself, fed by the same live stream, and uses
no external asset. Its targets are a finger's size (56 CSS pixels), and nothing is wider than
the screen at 1280x800 (a tablet held sideways) and 768x1024 (upright).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.runtime.daemon import daemon
from support.web.console_rig import DUAL, SINGLE, console_floor, console_url
from support.web.display_rig import headless

from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser

TABLET = {"landscape": (1280, 800), "portrait": (768, 1024)}
FINGER_PX = 56


@pytest.mark.parametrize("screen", sorted(TABLET))
async def test_the_console_shows_pending_pays_with_their_cards_tables_and_actions(
    tmp_path: Path, screen: str
) -> None:
    with PtyPair() as line:
        config, _keys = console_floor(tmp_path, line.path)
        async with daemon(config) as running, headless() as browser:
            width, height = TABLET[screen]
            page = await browser.new_page(viewport={"width": width, "height": height})
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            url = console_url(running.url)
            await page.goto(url)
            await page.wait_for_selector("body[data-loaded=true]")
            single = page.locator(f'.pay[data-payout="{SINGLE}"]')
            assert await single.locator(".card").count() == 7
            text = await single.inner_text()
            assert "T1 seat 1" in text
            assert "$1,000.05" in text
            assert "Five aces" in text
            assert "one signature" in text
            dual = page.locator(f'.pay[data-payout="{DUAL}"]')
            assert "two signatures" in await dual.inner_text()
            assert "T1" in await page.locator("#tables").inner_text()
            assert "none yet" in await page.locator("#actions").inner_text()
            names = await page.locator("#signers button").all_inner_texts()
            assert names == ["mgr (manager)", "sup1 (supervisor)", "sup2 (supervisor)"]
            sizes = await page.evaluate(
                "() => [...document.querySelectorAll('button')].filter(b => b.offsetParent)"
                ".map(b => [b.offsetWidth, b.offsetHeight])"
            )
            assert sizes
            assert all(w >= FINGER_PX and h >= FINGER_PX for w, h in sizes), sizes
            wide = await page.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= width
            await page.screenshot(path=str(tmp_path / f"console-{screen}.png"), full_page=True)
        assert all(r.startswith(url.split("/console/")[0]) for r in requests), requests
