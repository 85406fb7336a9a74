"""Stale must look stale: the display in headless Chromium when its feed is gone.

A supervisor across the pit must never read a dead number as a live one. When the daemon
stops (the page's event stream drops and its state requests fail) or the broker the tables
speak through goes away (``/api/state`` reports the link down), every meter greys out with
"as of hh:mm:ss" and the reason. A table never heard from says so; a closed table says since
when and why; the broker links' health is on the page. Screenshots of the stale screens are
saved in the test's temporary directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import TYPE_CHECKING

import pytest
from support.runtime.daemon import broker_settings, daemon, tables_announced, write_config
from support.web.display_rig import WAIT_MS, demo_floor, headless, open_display

from drivers.simulator_links import MqttTableLink

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.async_api import Page
    from support.drivers.mosquitto import Broker

pytestmark = pytest.mark.browser

GREY = "rgb(107, 116, 128)"
"""A stale meter's colour (controller/web/page.html); a live one is gold."""
AS_OF = re.compile(r"^as of \d\d:\d\d:\d\d · ")


async def stale_as_of(page: Page, reason: str) -> str:
    """Wait until the page greys its meters for ``reason``; what it says under each meter."""
    await page.wait_for_function(
        "reason => document.body.classList.contains('stale') && [...document"
        ".querySelectorAll('.pool .asof')].every((n) => n.textContent.includes(reason))",
        arg=reason,
        timeout=WAIT_MS,
    )
    shown = await page.locator(".pool .asof").first.inner_text()
    assert await page.locator(".pool .asof").first.is_visible()
    colour = await page.eval_on_selector(".pool .meter", "m => getComputedStyle(m).color")
    assert colour == GREY
    assert "STALE" in await page.locator("#health").inner_text()
    return shown


async def live(page: Page) -> None:
    """Wait until the page shows its meters live."""
    await page.wait_for_function(
        "() => !document.body.classList.contains('stale') && "
        "document.querySelector('#health').textContent.startsWith('ONLINE')",
        timeout=WAIT_MS,
    )
    colour = await page.eval_on_selector(".pool .meter", "m => getComputedStyle(m).color")
    assert colour != GREY


async def test_the_meters_grey_out_as_of_their_last_update_when_the_daemon_stops(
    tmp_path: Path,
) -> None:
    async with headless() as browser:
        async with daemon(demo_floor(tmp_path)) as running:
            page = await open_display(browser, running.url)
            await live(page)
            await running.stop()
        shown = await stale_as_of(page, "the controller does not answer")
        assert AS_OF.match(shown), shown
        await page.screenshot(path=str(tmp_path / "display-stale-stopped.png"))


async def heartbeating(link: MqttTableLink) -> None:
    """The table's console beats every 0.2 s (its timeout is 1 s), until cancelled."""
    while True:
        await link.heartbeat(link.table_id, "console")
        await asyncio.sleep(0.2)


def row_shows(table_id: str, cell: str, pattern: str) -> str:
    """A page function: whether a table's cell matches ``pattern`` (a JS regular expression)."""
    return (
        f"() => /{pattern}/.test("
        f"document.querySelector('tr[data-table=\"{table_id}\"] .{cell}')?.textContent ?? '')"
    )


async def test_tables_say_never_heard_from_and_why_they_closed_and_a_broker_gone_greys_the_meters(
    mosquitto: Broker, tmp_path: Path
) -> None:
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1", "t2"], heartbeat_timeout_s=1)
    async with (
        daemon(config) as running,
        MqttTableLink(broker_settings(mosquitto), "t1") as t1,
        headless() as browser,
    ):
        await tables_announced(running, ["t1"])
        beats = asyncio.create_task(heartbeating(t1))
        page = await open_display(browser, running.url)
        await live(page)
        t1_row, t2_row = page.locator('tr[data-table="t1"]'), page.locator('tr[data-table="t2"]')
        await page.wait_for_function(row_shows("t1", "heard", "s ago"), timeout=WAIT_MS)
        assert "never heard from" in await t2_row.locator(".heard").inner_text()
        sources = page.locator("#sources")
        assert "table events in" in await sources.inner_text()
        assert await sources.locator(".source.down").count() == 0

        # t1 falls silent: it closes after its timeout, and says since when and why.
        beats.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beats
        await page.wait_for_function(row_shows("t1", "state", "CLOSED"), timeout=WAIT_MS)
        state = await t1_row.locator(".state").inner_text()
        assert re.search(
            r"offline since \d\d:\d\d:\d\d · heartbeat timeout: silent for more than 1 s", state
        ), state
        assert "CLOSED" in await t2_row.locator(".state").inner_text()
        assert "never heard from" in await t2_row.locator(".heard").inner_text()

        # The broker goes: the meters grey out, and the link says it is down.
        mosquitto.stop()
        shown = await stale_as_of(page, "broker link mqtt down")
        assert AS_OF.match(shown), shown
        down = await sources.locator(".source.down").all_inner_texts()
        assert any(text.startswith("mqtt broker link · table events in down") for text in down), (
            down
        )
        await page.screenshot(path=str(tmp_path / "display-stale-broker.png"))
        mosquitto.start()
        await running.stop()
