"""The display page shows only meters the controller signed (docs/mqtt.md, "Signed meters").

The real page (controller/web/page.html) in headless Chromium, served by a scripted server in
the display's own formats (controller/web/display.py): the page is given the controller's
public key, and each meter of the stream and of the state its signature
(controller/web/snapshot.py ``signed_meter``). Meters at ``(epoch, seq)`` = (10^9, 10^9),
unsigned, signed by another key, or a genuine one with its amount changed, are checked with
WebCrypto's Ed25519 before the page's order rule sees them: none is ever shown, each is
counted, and the genuine meters after them are shown. The CSP stays the page's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from aiohttp import web
from support.web.display_rig import headless
from web.test_display_order import RECORD_SHOWN, ScriptedController, meter, serving, shows, state

from controller.security.controller_key import ControllerKey
from controller.web.display import KEY_META
from controller.web.policy import PAGE, SECURITY_HEADERS
from controller.web.snapshot import signed_meter

if TYPE_CHECKING:
    from controller.outputs import MeterUpdate

pytestmark = pytest.mark.browser

KEY = ControllerKey.generate()
INTRUDER = ControllerKey.generate()
HUGE = 10**9


def streamed(update: MeterUpdate, key: ControllerKey | None = KEY, **body: Any) -> bytes:
    """A meter event as display.py streams it, signed by ``key`` (its body changed by ``body``)."""
    data: dict[str, Any] = msgspec.to_builtins(update)
    if key is not None:
        signed = signed_meter(key, update)
        if body:
            signed["body"] = json.dumps({**json.loads(signed["body"]), **body})
        data["signed"] = signed
    return b"event: meter\ndata: %s\n\n" % json.dumps(data).encode()


class SignedController(ScriptedController):
    """The scripted server, giving the page the key and the state signed meters."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: asyncio.Queue[bytes] = asyncio.Queue()

    async def index(self, _: web.Request) -> web.Response:
        """The real page, given the controller's public key as display.py gives it."""
        page = PAGE.replace(KEY_META % "", KEY_META % KEY.public_key, 1)
        return web.Response(text=page, content_type="text/html", headers=SECURITY_HEADERS)

    async def state(self, _: web.Request) -> web.Response:
        """The current state, each pool's meter signed as snapshot.py signs it."""
        document = json.loads(json.dumps(self.current))
        for pool in document["pools"]:
            update = meter(pool["meter_cents"], pool["epoch"], pool["seq"])
            pool["signed"] = signed_meter(KEY, update)
        return web.json_response(document)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """The events the test wrote, byte for byte."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
            while True:
                await response.write(await self.raw.get())
        return response


async def test_forged_meters_at_a_huge_epoch_and_seq_never_show_and_the_genuine_ones_do() -> None:
    controller = SignedController()
    controller.current = state(100_00, 2, 10)
    errors: list[str] = []
    async with serving(controller) as url, headless() as browser:
        page = await browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        await page.add_init_script(RECORD_SHOWN)
        await page.goto(url)
        await shows(page, "$100.00")
        assert await page.evaluate("document.body.dataset.meterSignatures") == "checked"
        fake = meter(999_999_00, HUGE, HUGE)
        for forged in (
            streamed(fake, key=None),
            streamed(fake, key=INTRUDER),
            streamed(meter(101_00, 2, 11), meter_cents=999_999_00, epoch=HUGE, seq=HUGE),
        ):
            controller.raw.put_nowait(forged)
        await page.wait_for_function(
            "() => Number(document.body.dataset.unverifiedDropped ?? 0) === 3", timeout=15_000
        )
        controller.raw.put_nowait(streamed(meter(102_00, 2, 12)))
        await shows(page, "$102.00")
        shown = await page.evaluate("window.shown")
    assert shown == ["$100.00", "$102.00"], shown
    assert not [e for e in errors if "Content Security Policy" in e], errors
