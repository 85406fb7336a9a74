"""A stopped controller's page goes stale everywhere: every panel greys, says "as of", and ages.

A supervisor across the pit must never read a dead screen as a live one (docs/operations.md,
"The display page"). When the daemon stops, the meters grey out "as of" their last update; so
must the rest. The signs show a meter, so they grey with it; the sources, the pending pays,
the tables and the hits are as of the last state the page was answered, and say so; and the
ages on the page go on counting, so that a table heard half a second before the stop is not
"heard 0.5 s ago" a minute later. The real daemon and page in headless Chromium; the page's
clock is Playwright's, moved a minute on by the test (nothing waits a minute). The pictures at
the stop and a minute after it differ exactly where the ages are.

With ``JACKPOTD_SCREENSHOT_DIR=docs/images`` the two pictures are saved where
docs/operations.md shows them (display-stopped.png, display-stopped-60s.png).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import pytest
from support.runtime.daemon import daemon
from support.web.display_rig import SCREENS, WAIT_MS, demo_floor, headless, played

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.browser

DOCS_SCREENSHOTS: Final = "JACKPOTD_SCREENSHOT_DIR"
"""Where the two pictures are copied for docs/operations.md, if set (docs/images)."""
GREY = "rgb(107, 116, 128)"
"""A stale meter's and a stale sign's colour (controller/web/page.html)."""
AS_OF = re.compile(r"^as of \d\d:\d\d:\d\d$")
MINUTE_MS = 60_000
PANELS = ("signs-section", "pending-section", "tables-section", "hits-section")
UNCHANGED = ("header", "#pools", "#signs-section", "#hits-section")
"""What says the same a minute on: the meters' and signs' "as of", the hits."""
VISIBLE = 48
COMPARE = """async ([before, after, visible]) => {
  const pixels = async (png) => {
    const image = new Image();
    image.src = "data:image/png;base64," + png;
    await image.decode();
    const canvas = new OffscreenCanvas(image.width, image.height);
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, image.width, image.height);
  };
  const [a, b] = [await pixels(before), await pixels(after)];
  if (a.width !== b.width || a.height !== b.height) return a.width * a.height;
  let changed = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const difference = Math.abs(a.data[i] - b.data[i]) + Math.abs(a.data[i + 1] - b.data[i + 1]) +
      Math.abs(a.data[i + 2] - b.data[i + 2]);
    if (difference > visible) changed += 1;
  }
  return changed;
}"""
AGEING = ("#pending-section", "#tables-section")
"""What ages: how long each pay has waited, when each table was last heard."""


async def panel_notes(page: Page) -> dict[str, str]:
    """What each panel shown says in its "as of" note, by its id (the demo has no sources row)."""
    notes: dict[str, str] = await page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.panel-asof')]"
        ".filter((n) => n.parentElement.checkVisibility())"
        ".map((n) => [n.closest('section, #sources-row').id,"
        " n.checkVisibility() ? n.textContent : ''])"
        ")"
    )
    return notes


async def ages(page: Page) -> tuple[list[str], list[str]]:
    """The pending pays' ages and the tables' "heard", as shown."""
    waited = await page.locator("#pending td.age").all_inner_texts()
    heard = await page.locator("#tables td.heard").all_inner_texts()
    return waited, heard


async def pictures(page: Page, tmp_path: Path, name: str) -> dict[str, bytes]:
    """The whole page saved as ``name``, and each panel's picture, by selector."""
    await page.screenshot(path=str(tmp_path / name))
    return {part: await page.locator(part).screenshot() for part in UNCHANGED + AGEING}


async def changed_pixels(
    browser: Browser, before: dict[str, bytes], after: dict[str, bytes]
) -> dict[str, int]:
    """How many pixels of each picture changed visibly, compared in a blank page's canvas.

    Visibly: by more than :data:`VISIBLE` (the channels' differences summed). Chromium paints a
    rounded corner a shade differently now and then (a difference of a few units); text that
    changed differs by hundreds.
    """
    blank = await browser.new_page()
    try:
        return {
            part: await blank.evaluate(
                COMPARE,
                [
                    base64.b64encode(before[part]).decode(),
                    base64.b64encode(after[part]).decode(),
                    VISIBLE,
                ],
            )
            for part in before
        }
    finally:
        await blank.close()


async def test_after_a_stop_every_panel_greys_says_as_of_and_its_ages_go_on_counting(
    tmp_path: Path,
) -> None:
    config = demo_floor(tmp_path, signs=("pit-sign",), hit_every=2, rounds=6)
    async with daemon(config) as running, headless() as browser:
        await played(running)
        width, height = SCREENS["pit"]
        page = await browser.new_page(viewport={"width": width, "height": height})
        await page.clock.install()  # the real time flows until the test pauses it
        await page.goto(running.url)
        await page.wait_for_function(
            "() => document.body.dataset.stream === 'open' && "
            "!document.body.classList.contains('stale') && "
            "document.querySelectorAll('#pending tr.pending').length > 0 && "
            "document.querySelector('.sign') !== null",
            timeout=WAIT_MS,
        )
        assert await panel_notes(page) == dict.fromkeys(PANELS, "")
        await running.stop()
        await page.wait_for_function(
            "() => document.body.classList.contains('unreachable')", timeout=WAIT_MS
        )
        now = await page.evaluate("Date.now()")  # a number is taken for seconds: a datetime
        await page.clock.pause_at(datetime.fromtimestamp(now / 1000 + 1, UTC))
        await page.clock.run_for(1000)  # the page's one-second tick: the ages as of now
        notes = await panel_notes(page)
        assert set(notes) == set(PANELS)
        meters_as_of = (await page.locator(".pool .asof").first.inner_text()).split(" · ")[0]
        assert AS_OF.match(meters_as_of), meters_as_of
        assert notes["signs-section"] == meters_as_of  # the signs show a meter: as old
        others = {notes[key] for key in notes if key != "signs-section"}
        assert len(others) == 1, notes  # the last state answer's time, on every other panel
        assert AS_OF.match(others.pop()), notes
        sign = await page.eval_on_selector(
            ".sign", "s => [getComputedStyle(s).color, getComputedStyle(s).textShadow]"
        )
        assert sign == [GREY, "none"]  # not a bright live red
        for panel in ("#pending-section .scroll", "#tables-section .scroll"):
            filter_ = await page.eval_on_selector(panel, "p => getComputedStyle(p).filter")
            assert filter_ == "grayscale(1)", panel
        waited, heard = await ages(page)
        assert waited
        assert heard
        assert all(re.fullmatch(r"\d+(\.\d)? s", age) for age in waited), waited
        assert all(re.fullmatch(r"\d+(\.\d)? s ago", age) for age in heard), heard
        at_stop = await pictures(page, tmp_path, "display-stopped.png")

        await page.clock.run_for(MINUTE_MS)
        assert await panel_notes(page) == notes  # still as of the same moments
        waited_later, heard_later = await ages(page)
        assert heard_later == ["1 min ago"] * len(heard)  # not "heard 0.5 s ago" any more
        assert len(waited_later) == len(waited)
        assert all(re.fullmatch(r"[12] min", age) for age in waited_later), waited_later
        later = await pictures(page, tmp_path, "display-stopped-60s.png")
        changed = await changed_pixels(browser, at_stop, later)
        assert {part: changed[part] for part in UNCHANGED} == dict.fromkeys(UNCHANGED, 0)
        assert all(changed[part] > 0 for part in AGEING), changed
    shots = os.environ.get(DOCS_SCREENSHOTS)
    if shots:
        for name in ("display-stopped.png", "display-stopped-60s.png"):
            shutil.copyfile(tmp_path / name, f"{shots}/{name}")
