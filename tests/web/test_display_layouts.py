"""The display's layouts: the pit screen, a tablet and a phone, with a long list of pending pays.

The page is a floor supervisor's screen across the pit (1920x1080): the meters must be on it
without scrolling, and so must the tables, however many pays wait for verification (54 of
them once pushed the tables off the screen). The same page serves a supervisor's tablet
(768x1024) and a phone (390x844). At each size nothing may be wider than the screen, every
meter shows whole, and the pending panel is capped and scrolls. Screenshots of each size are
saved in the test's temporary directory.

The README's picture (docs/images/display.png) is the pit-size screenshot. To refresh it:

    JACKPOTD_SCREENSHOT=docs/images/display.png .venv/bin/pytest tests/web/test_display_layouts.py
"""

from __future__ import annotations

import os
import re
import shutil
from typing import TYPE_CHECKING

import pytest
from support.runtime.daemon import daemon
from support.web.display_rig import (
    README_SCREENSHOT,
    SCREENS,
    demo_floor,
    headless,
    layout,
    open_display,
    played,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser

PENDING = 54
"""Pays awaiting verification: as many as once pushed the tables off the pit screen."""
ROUNDS = 30
"""Rounds per table: with a jackpot hand every second round, more than 54 pays wait."""
PIT_MARGIN = 0.5
"""On a tablet or a phone the pending panel may take at most this share of the screen."""


async def test_the_pit_screen_tablet_and_phone_layouts_keep_meters_and_tables_in_view(
    tmp_path: Path,
) -> None:
    config = demo_floor(tmp_path, signs=("pit-sign",), hit_every=2, rounds=ROUNDS)
    async with daemon(config) as running, headless() as browser:
        await played(running)  # a still floor: the same picture at every size
        assert len(running.runtime.journal.pending_payouts()) >= PENDING
        for screen, (width, height) in SCREENS.items():
            page = await open_display(browser, running.url, screen)
            await page.wait_for_function(
                f"() => document.querySelectorAll('#pending tr.pending').length >= {PENDING}"
            )
            await page.locator(".sign").first.wait_for()
            drawn = await layout(page)
            assert (drawn.width, drawn.height) == (width, height)
            assert drawn.overflowing == [], screen
            assert drawn.page_width <= width, screen
            assert drawn.meters_fit, screen
            # The pending panel is capped: it scrolls rather than push the rest down.
            assert drawn.pending_content > drawn.pending_shown, screen
            if screen == "pit":
                assert all(drawn.on_screen(meter) for meter in drawn.meters)
                assert drawn.on_screen(drawn.pending)
                assert drawn.on_screen(drawn.tables)
                assert drawn.page_height <= height  # one screen: nothing to scroll
            else:
                assert drawn.pending.bottom - drawn.pending.top <= height * PIT_MARGIN, screen
            shot = tmp_path / f"display-{screen}.png"
            await page.screenshot(path=str(shot))
            assert shot.read_bytes().startswith(b"\x89PNG")
            await page.close()
        readme = os.environ.get(README_SCREENSHOT)
        if readme:
            shutil.copyfile(tmp_path / "display-pit.png", readme)


async def test_pending_pays_read_as_a_supervisor_reads_them_oldest_first_with_red_and_black_suits(
    tmp_path: Path,
) -> None:
    config = demo_floor(tmp_path, hit_every=2, rounds=6)
    async with daemon(config) as running, headless() as browser:
        await played(running)
        assert len(running.runtime.journal.pending_payouts()) >= 6
        page = await open_display(browser, running.url)
        await page.wait_for_function(
            "() => document.querySelectorAll('#pending tr.pending').length >= 6"
        )
        rows = page.locator("#pending tr.pending")
        labels = await rows.locator(".label").all_inner_texts()
        # "T2 seat 1 · bonus · Five aces", not the payout id.
        pattern = re.compile(r"^T\d seat \d · (jackpot|bonus|envy of seat \d|[a-z-]+) · \S.*$")
        assert all(pattern.match(label) for label in labels), labels
        assert not any("/" in label for label in labels)
        shown = await page.locator("#pending").inner_text()
        assert "JACKPOT" in shown  # a pay from the meter says so
        # Oldest first, each with its time and how long it has waited.
        times = await rows.locator("td.time").all_inner_texts()
        assert times == sorted(times)
        assert all(re.fullmatch(r"\d\d:\d\d:\d\d", time) for time in times), times
        ages = await rows.locator("td.age").all_inner_texts()
        assert all(re.fullmatch(r"\d+(\.\d)? s|\d+ min|\d+ h \d\d min", age) for age in ages)
        # The suits as symbols, hearts and diamonds in red, spades and clubs in black.
        colours = await page.eval_on_selector_all(
            "#pending .card",
            "cards => cards.map((c) => [c.textContent, getComputedStyle(c).color])",
        )
        suits = {text[-1]: colour for text, colour in colours if text[-1] in "♠♥♦♣"}
        assert set(suits) >= {"♥", "♣"}, colours
        red, black = "rgb(212, 0, 0)", "rgb(17, 17, 17)"
        for suit, colour in suits.items():
            assert colour == (red if suit in "♥♦" else black), (suit, colour)
        assert not re.search(r"\b(Ac|Jk|[2-9TJQKA][cdhs])\b", shown)  # no card codes
