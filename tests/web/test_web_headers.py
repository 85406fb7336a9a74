"""The security headers on every answer of the web port (controller/web/policy.py).

The real service runs the demo's floor in this event loop; every path it serves, a path it
does not (404), ``/events`` (a stream, refused or not), and a warm standby's page each carry
each header with its exact value. In headless Chromium the page then runs under its policy:
its script and style apply (the meters are drawn in the page's colours), the browser reports
no violation of its own, and a script injected into the page is refused (docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import aiohttp
import pytest
from support.runtime.daemon import daemon
from support.runtime.floor import free_port, within
from support.web.display_rig import demo_floor, headless

from controller.web.display import serve_display
from controller.web.limits import WebLimits
from controller.web.policy import CONTENT_SECURITY_POLICY, PAGE, SECURITY_HEADERS
from controller.web.standby import StandbyPage, Standing

if TYPE_CHECKING:
    from pathlib import Path

PATHS = ("", "api/state", "metrics", "healthz", "leader", "no-such-page")
EXPECTED = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def headers_of(url: str) -> list[dict[str, str]]:
    """The headers of each of :data:`PATHS`, then of ``/events`` (its head only)."""
    found = []
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for path in PATHS:
            async with session.get(url + path) as response:
                found.append(dict(response.headers))
        async with session.get(url + "events") as response:
            found.append(dict(response.headers))
    return found


@pytest.mark.parametrize("header", list(EXPECTED))
async def test_every_answer_of_the_display_carries_the_header(tmp_path: Path, header: str) -> None:
    async with daemon(demo_floor(tmp_path, tables=1)) as running:
        answers = await headers_of(running.url)
    assert [answer.get(header) for answer in answers] == [EXPECTED[header]] * len(answers)


@pytest.mark.parametrize("header", list(EXPECTED))
async def test_every_answer_of_a_standby_carries_the_header(header: str) -> None:
    port, started = free_port(), asyncio.Event()
    limits = WebLimits("127.0.0.1", port, 16, 5.0, 5.0, 5.0)
    task = asyncio.create_task(serve_display(StandbyPage(Standing("n1", "c1")), limits, started))
    try:
        await within(started.wait(), "the standby's page")
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for path in ("leader", "healthz", "metrics", "no-such-page"):
                async with session.get(f"http://127.0.0.1:{port}/{path}") as response:
                    assert response.headers.get(header) == EXPECTED[header], path
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_the_policy_allows_the_pages_own_script_and_style_and_nothing_else() -> None:
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["default-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["connect-src"] == "'self'"
    assert PAGE.count("<script>") == len(directives["script-src"].split()) == 1
    assert PAGE.count("<style>") == len(directives["style-src"].split()) == 1
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    assert SECURITY_HEADERS == EXPECTED


VIOLATIONS = """() => { window.violations = [];
  document.addEventListener("securitypolicyviolation",
    (e) => window.violations.push(e.violatedDirective + " " + e.blockedURI)); }"""
INJECT = """() => { const s = document.createElement("script");
  s.textContent = "window.injected = true"; document.body.append(s);
  document.body.insertAdjacentHTML("beforeend",
    '<img src="x" onerror="window.injected = true">'); }"""


@pytest.mark.browser
async def test_the_page_runs_under_its_policy_and_an_injected_script_does_not(
    tmp_path: Path,
) -> None:
    async with daemon(demo_floor(tmp_path, tables=1)) as running, headless() as browser:
        context = await browser.new_context()
        await context.add_init_script(f"({VIOLATIONS})()")
        page = await context.new_page()
        await page.goto(running.url)
        await page.locator(".pool .meter").first.wait_for(timeout=30_000)
        assert (await page.locator(".pool .meter").first.inner_text()).startswith("$")
        background = await page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(11, 15, 20)"  # the page's own style applies
        assert await page.evaluate("window.violations") == []
        await page.evaluate(INJECT)
        await page.wait_for_function("window.violations.length >= 2", timeout=10_000)
        assert await page.evaluate("window.injected") is None
        blocked = await page.evaluate("window.violations")
        assert any(v.startswith("script-src") for v in blocked), blocked
        await context.close()
