"""A four-level pool on the floor's screens: each level's card, and the grand's "must hit by".

``jackpotd demo --levels`` adds a table on the demo's four-level progressive, whose grand is a
mystery level (docs/paytables.md, "Levels"; docs/rules.md § 10): it hits at a trigger drawn in
[$10,000, $12,000) and sealed until the hit. The ceiling is public: the display's card of the
grand says ``must hit by $12,000.00`` under its meter, signed with it, and the emulated Alpha
sign over the table shows ``$10,012.25 MUST HIT BY $12,000.00`` (docs/signs.md); the major,
minor and mini show their meters as any pool does, and the trigger shows nowhere. ``/metrics``
names each level's pool and kind, and the grand's ceiling (docs/metrics.md). The real daemon,
its display server, headless Chromium.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest
from support.runtime.floor import free_port
from support.web.display_rig import headless

from controller.service.demo import LEVELS_POOL

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser

LEVELS = [f"{LEVELS_POOL}.{name}" for name in ("grand", "major", "minor", "mini")]
GRAND = LEVELS[0]


def fetched(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=10) as answer:
        body: bytes = answer.read()
    return body.decode()


def state(port: int) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(fetched(port, "api/state"))
    return document


async def test_the_levels_demo_shows_each_level_and_the_grands_must_hit_by(tmp_path: Path) -> None:
    port = free_port()
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "demo", "--levels", "--tables", "1", "--port",
         str(port), "--interval", "0.05", "--hit-every", "0", "--db", str(tmp_path / "demo.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert daemon.stdout is not None
        url = daemon.stdout.readline().rsplit(" ", 1)[1].strip()
        async with headless() as browser:
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            await page.goto(url)
            grand = page.locator(f'[data-pool="{GRAND}"] .life')
            await page.wait_for_function(
                'pool => document.querySelector(`[data-pool="${pool}"] .life`)'
                "?.textContent.includes('must hit by $12,000.00')",
                arg=GRAND,
                timeout=15_000,
            )
            assert await grand.inner_text() == "must hit by $12,000.00"
            for level in LEVELS[1:]:
                card = page.locator(f'[data-pool="{level}"]')
                assert (await card.locator(".meter").inner_text()).startswith("$")
                assert "must hit by" not in await card.locator(".life").inner_text()
            # The emulated sign over the levels' table, driven by the real Alpha sign driver.
            await page.wait_for_function(
                "() => [...document.querySelectorAll('.sign')]"
                ".some(s => s.textContent.includes('MUST HIT BY $12,000.00'))",
                timeout=15_000,
            )
        document = state(port)
        pools = {pool["pool"]: pool for pool in document["pools"]}
        assert set(LEVELS) <= pools.keys()
        assert pools[GRAND]["must_hit_by_cents"] == 1_200_000
        assert all("must_hit_by_cents" not in pools[level] for level in LEVELS[1:])
        assert "must_hit_by_cents" not in pools["fortune-progressive"]
        if "signed" in pools[GRAND]:  # the ceiling is signed with the meter it stands beside
            assert json.loads(pools[GRAND]["signed"]["body"])["must_hit_by_cents"] == 1_200_000
        (sign,) = (sign for sign in document["signs"] if sign["name"] == "pit-sign-grand")
        assert sign["text"].endswith(" MUST HIT BY $12,000.00")
        metrics = fetched(port, "metrics").splitlines()
        for name in ("grand", "major", "minor", "mini"):
            kind = "mystery" if name == "grand" else "hand"
            labels = f'kind="{kind}",level="{name}",parent_pool="{LEVELS_POOL}"'
            assert f'jackpotd_pool_level{{{labels},pool="{LEVELS_POOL}.{name}"}} 1.0' in metrics
        assert f'jackpotd_pool_must_hit_by_dollars{{pool="{GRAND}"}} 12000.0' in metrics
        assert not any('parent_pool="fortune' in line for line in metrics)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=30)
