"""The display page in a real headless Chromium: the browser, the screens, and the layout facts.

The display is a floor supervisor's screen across the pit (1920x1080), and the same page on a
tablet (768x1024) and a phone (390x844). :func:`layout` reads, in the page, what a layout must
hold: nothing wider than the screen, the meters whole and on screen, the pending panel capped
and scrollable. :func:`demo_floor` is the demo's configuration (simulated tables, one pool,
an emulated LED sign if asked) on a free port, for a daemon run in-process.

``README_SCREENSHOT`` is the environment variable that names where the pit-size screenshot is
copied for the README (docs/images/display.png); tests/web/test_display_layouts.py says how.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from playwright.async_api import async_playwright

from controller.service.demo import demo_config
from support.runtime.floor import WAIT_S, free_port, within

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from playwright.async_api import Browser, Page

    from controller.config.load import Config
    from support.runtime.daemon import Daemon

CHROMIUM_FLAGS: Final = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENS: Final = {"pit": (1920, 1080), "tablet": (768, 1024), "phone": (390, 844)}
"""The floor's screens: the pit display, a supervisor's tablet, a phone."""
README_SCREENSHOT: Final = "JACKPOTD_SCREENSHOT"
WAIT_MS: Final = WAIT_S * 1000


def chromium() -> str:
    """The Chromium binary (``make test`` installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found is not None, "chromium is missing: make test installs it"
    return found


@contextlib.asynccontextmanager
async def headless() -> AsyncIterator[Browser]:
    """A headless Chromium, closed on the way out."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


async def open_display(browser: Browser, url: str, screen: str = "pit") -> Page:
    """The display at one of :data:`SCREENS`, once its meters are drawn."""
    width, height = SCREENS[screen]
    page = await browser.new_page(viewport={"width": width, "height": height})
    await page.goto(url)
    await page.locator(".pool .meter").first.wait_for(timeout=WAIT_MS)
    return page


def demo_floor(
    tmp_path: Path,
    *,
    tables: int = 3,
    signs: tuple[str, ...] = (),
    hit_every: int = 0,
    rounds: int | None = None,
) -> Config:
    """The demo's floor, fast: a round every 20 ms per table, on a free port.

    With ``rounds`` the tables stop playing after that many (their heartbeats go on).
    """
    return demo_config(
        tables=tables,
        signs=signs,
        journal=tmp_path / "demo.db",
        port=free_port(),
        interval_s=0.02,
        hit_every=hit_every,
        rounds=rounds,
    )


async def played(running: Daemon) -> None:
    """Wait (bounded) until the demo's tables have played their rounds."""
    (simulator,) = running.runtime.sources
    finished = getattr(simulator, "finished", None)
    assert isinstance(finished, asyncio.Event), simulator
    await within(finished.wait(), "the tables to play their rounds")


def with_streams(config: Config, streams: int) -> Config:
    """The configuration with ``[web] max_streams`` set to ``streams``."""
    return dataclasses.replace(config, web=dataclasses.replace(config.web, max_streams=streams))


@dataclass(frozen=True)
class Box:
    """An element's place on the screen, in CSS pixels from the viewport's top left."""

    top: float
    bottom: float
    left: float
    right: float


@dataclass(frozen=True)
class Layout:
    """What the page looks like at one screen size."""

    width: int
    height: int
    page_width: int
    page_height: int
    overflowing: list[str]
    """Elements wider than their screen, or whose content is wider than themselves."""
    meters: list[Box]
    meters_fit: bool
    pending: Box
    pending_shown: float
    pending_content: float
    tables: Box

    def on_screen(self, box: Box) -> bool:
        """Whether ``box`` is wholly visible without scrolling."""
        return (
            box.top >= 0 and box.left >= 0 and box.bottom <= self.height and box.right <= self.width
        )


_FACTS: Final = (Path(__file__).with_name("layout_facts.js")).read_text(encoding="utf-8")
"""The script that reads the facts in the page (a function of no arguments)."""


async def layout(page: Page) -> Layout:
    """The layout facts of the page as it is drawn now."""
    facts: dict[str, Any] = await page.evaluate(_FACTS)
    pending, tables = Box(**facts.pop("pending")), Box(**facts.pop("tables"))
    meters = [Box(**meter) for meter in facts.pop("meters")]
    return Layout(**facts, pending=pending, tables=tables, meters=meters)


async def state_when(
    running: Daemon, holds: Callable[[dict[str, Any]], bool], what: str
) -> dict[str, Any]:
    """The first ``/api/state`` document for which ``holds`` is true, asked every 50 ms.

    For what the controller learns without journaling anything (a broker link dropping): no
    commit wakes a wait, so the page's own question is asked again, bounded by ``WAIT_S``.
    """

    async def ask() -> dict[str, Any]:
        while True:
            status, body = await running.get("api/state")
            assert status == 200, body
            document: dict[str, Any] = json.loads(body)
            if holds(document):
                return document
            await asyncio.sleep(0.05)

    return await within(ask(), what)
