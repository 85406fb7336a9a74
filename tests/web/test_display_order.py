"""The display page never shows a meter going back: only increasing (epoch, seq) is shown.

Behind HAProxy a page may be answered by a former leader (a zombie that woke up) or receive
an answer overtaken by a newer event. The real page (controller/web/page.html), in headless
Chromium, is served here by a scripted server that plays exactly that: its stream and its
state answers arrive out of order, in the display's own formats (the stream's events are the
controller's updates encoded as controller/web/display.py encodes them). Every text the meter
ever showed is recorded in the page: it must only move forward, and each older update is
counted (docs/ha.md, "Brokers and followers").
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from aiohttp import web
from support.runtime.floor import free_port
from support.web.display_rig import WAIT_MS, headless

from controller.outputs import MeterUpdate, TableUpdate
from controller.web.policy import PAGE

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from playwright.async_api import Page

    from controller.outputs import AnyUpdate

pytestmark = pytest.mark.browser

AT = "2025-06-01T21:14:03.118Z"
POOL = "main"
RECORD_SHOWN = """
window.shown = [];
new MutationObserver(() => {
  const meter = document.querySelector('.pool .meter');
  const text = meter ? meter.textContent : null;
  if (text && window.shown[window.shown.length - 1] !== text) window.shown.push(text);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def state(cents: int, epoch: int, seq: int) -> dict[str, Any]:
    """``/api/state`` as controller/web/snapshot.py answers it, at row ``seq`` of ``epoch``."""
    return {
        "at": AT,
        "stale": None,
        "controller": {"id": "pit", "online": True, "reason": "", "rows": seq,
                       "started_at": AT, "epoch": epoch, "seq": seq},
        "pools": [{"pool": POOL, "paytable": "progressive-1", "meter_cents": cents,
                   "reserve_cents": 0, "overflow_cents": 0, "seed_cents": 50_000, "hits": 0,
                   "epoch": epoch, "seq": seq}],
        "pending": [], "tables": [], "hits": [], "sources": [], "signs": [],
    }  # fmt: skip


def meter(cents: int, epoch: int, seq: int) -> MeterUpdate:
    return MeterUpdate(AT, seq, POOL, cents, 0, 0, 50_000, epoch=epoch)


class ScriptedController:
    """Serves the page, a state answer the test sets, and a stream the test writes."""

    def __init__(self) -> None:
        self.current = state(100_00, 2, 10)
        """What ``/api/state`` answers, unless an answer is queued in :attr:`answers`."""
        self.answers: list[dict[str, Any]] = []
        self.asked = 0
        self.stream: asyncio.Queue[AnyUpdate] = asyncio.Queue()
        self._encoder = msgspec.json.Encoder()

    def app(self) -> web.Application:
        """The routes of controller/web/display.py the page uses."""
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/api/state", self.state),
                web.get("/events", self.events),
            ]
        )
        return app

    async def index(self, _: web.Request) -> web.Response:
        """The real page."""
        return web.Response(text=PAGE, content_type="text/html")

    async def state(self, _: web.Request) -> web.Response:
        """The next queued answer, else the current state."""
        self.asked += 1
        return web.json_response(self.answers.pop(0) if self.answers else self.current)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """What the test writes, as display.py streams it."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
            while True:
                update = await self.stream.get()
                kind = str(type(update).__struct_config__.tag)
                await response.write(
                    b"event: %s\ndata: %s\n\n" % (kind.encode(), self._encoder.encode(update))
                )
        return response


@contextlib.asynccontextmanager
async def serving(controller: ScriptedController) -> AsyncIterator[str]:
    runner = web.AppRunner(controller.app(), shutdown_timeout=0.5)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        await runner.cleanup()


async def shows(page: Page, text: str) -> None:
    await page.wait_for_function(
        "text => document.querySelector('.pool .meter')?.textContent === text",
        arg=text,
        timeout=WAIT_MS,
    )


async def dropped(page: Page, count: int) -> None:
    await page.wait_for_function(
        "count => Number(document.body.dataset.staleDropped ?? 0) >= count",
        arg=count,
        timeout=WAIT_MS,
    )


async def test_the_page_never_shows_a_meter_going_back_whatever_order_updates_arrive_in() -> None:
    controller = ScriptedController()
    async with serving(controller) as url, headless() as browser:
        page = await browser.new_page()
        warnings: list[str] = []
        page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
        await page.add_init_script(RECORD_SHOWN)
        await page.goto(url)
        await shows(page, "$100.00")
        controller.current = state(120_00, 2, 12)
        controller.stream.put_nowait(meter(120_00, 2, 12))
        await shows(page, "$120.00")
        # A zombie's stream (epoch 1, a higher row), then a late update of this epoch.
        controller.stream.put_nowait(meter(90_00, 1, 50))
        await dropped(page, 1)
        controller.stream.put_nowait(meter(110_00, 2, 11))
        await dropped(page, 2)
        # A state answer overtaken by the stream (row 9), then the zombie's whole state.
        controller.answers = [state(95_00, 2, 9), state(90_00, 1, 50)]
        controller.stream.put_nowait(TableUpdate(AT, 13, "t1", online=True, reason="back"))
        await dropped(page, 3)
        controller.stream.put_nowait(TableUpdate(AT, 14, "t1", online=True, reason="back"))
        await dropped(page, 4)
        assert await page.locator(".pool .meter").inner_text() == "$120.00"
        # The new leader's epoch goes on, its rows numbered from where it took over.
        controller.current = state(130_00, 3, 1)
        controller.stream.put_nowait(meter(130_00, 3, 1))
        await shows(page, "$130.00")
        assert await page.evaluate("window.shown") == ["$100.00", "$120.00", "$130.00"]
        assert await page.evaluate("document.body.dataset.staleDropped") == "4"
    assert len([w for w in warnings if "older than one shown" in w]) == 1, warnings
