"""What the floor sees of a pool's life, against a real ``jackpotd run`` and its operator socket.

A pool suspended, resumed, transferred and retired by ``jackpotd pool ...`` signed with the
operators' own key files (docs/operations.md, "A pool's life"), then read where the floor reads
it: the display's ``/api/state`` (its pools, and the emulated Alpha sign it mirrors, written
with real Alpha frames), ``/metrics`` and the page itself in headless Chromium (docs/signs.md,
"A pool's life"; docs/operations.md, "A pool's life on the display"; docs/metrics.md). A
suspended pool keeps its meters and refuses wagers with the reason on its signs (68 IAC
2-6-33); a transfer shows on the signs and displays of both pools, and a retired pool is
closed (44 Pa.B. 599, Mich. Admin. Code R 432.1838(4)).
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import TYPE_CHECKING, Any

from support.runtime.floor import POOL
from support.runtime.operator_rig import DANA, FILES, SAM, Running, running_daemon
from support.web.display_rig import headless, open_display

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.async_api import Page

ANNEX = "annex"
SIGN = "pit-sign"
WAIT_S = 30.0
MORE = (
    f'\n[[pools]]\nid = "{ANNEX}"\npaytable = "progressive-1"\n\n'
    f'[[alpha_sign]]\nname = "{SIGN}"\nurl = "emulator://{SIGN}"\npool_id = "{POOL}"\n'
    'bytesize = 8\nparity = "N"\n'  # a pty takes 8N1 only (controller/service/demo.py)
)


def fetched(running: Running, path: str) -> str:
    """The display server's answer to ``GET /path``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{running.web_port}/{path}", timeout=10) as got:
        body: bytes = got.read()
    return body.decode()


def state_when(
    running: Running, holds: Callable[[dict[str, Any]], bool], what: str
) -> dict[str, Any]:
    """The first ``/api/state`` for which ``holds`` is true, asked every 50 ms, bounded.

    A sign is written after the commit, on its own line's pace: no event of the test's own
    tells when, so the page's own question is asked again, as tests/support/web/display_rig.py does.
    """
    deadline = time.monotonic() + WAIT_S
    while True:
        document: dict[str, Any] = json.loads(fetched(running, "api/state"))
        if holds(document):
            return document
        assert time.monotonic() < deadline, f"never {what}: {document['pools']} {document['signs']}"
        time.sleep(0.05)


def pool_in(document: dict[str, Any], pool_id: str) -> dict[str, Any]:
    (pool,) = (pool for pool in document["pools"] if pool["pool"] == pool_id)
    return dict(pool)


def sign_text(document: dict[str, Any]) -> str:
    (sign,) = (sign for sign in document["signs"] if sign["name"] == SIGN)
    return str(sign["text"])


def in_play_metric(running: Running, pool_id: str) -> list[str]:
    """The ``jackpotd_pool_in_play`` series of ``pool_id`` in ``/metrics``."""
    lines = fetched(running, "metrics").splitlines()
    return [
        line
        for line in lines
        if line.startswith("jackpotd_pool_in_play{") and f'pool="{pool_id}"' in line
    ]


def signed(running: Running, *argv: str) -> None:
    done = running.jackpotd(*argv)
    assert done.returncode == 0, done.stderr


LIFE = {"status", "status_reason", "transferred_in_cents", "transferred_from"}


def test_68_iac_2_6_33_a_suspended_pool_keeps_its_meter_and_shows_suspended_with_its_reason() -> (
    None
):
    with running_daemon(MORE) as running:
        before = state_when(running, lambda d: sign_text(d).startswith("$"), "the meter shown")
        in_play = pool_in(before, POOL)
        assert not LIFE & in_play.keys()  # a pool in play: the document it always was
        assert in_play_metric(running, POOL) == [
            f'jackpotd_pool_in_play{{pool="{POOL}",status="in play"}} 1.0'
        ]

        signed(running, "pool", "suspend", POOL, "--reason", "sign dark", "--key", FILES[SAM])
        after = state_when(
            running, lambda d: sign_text(d) == "SUSPENDED sign dark", "SUSPENDED on the sign"
        )
        pool = pool_in(after, POOL)
        assert (pool["status"], pool["status_reason"]) == ("suspended", "sign dark")
        kept = ("meter_cents", "reserve_cents", "overflow_cents", "seed_cents")
        assert [pool[k] for k in kept] == [in_play[k] for k in kept]
        if "signed" in pool:  # the reason is signed with the meter it stands beside
            body = json.loads(pool["signed"]["body"])
            assert (body["status"], body["status_reason"]) == ("suspended", "sign dark")
        assert in_play_metric(running, POOL) == [
            f'jackpotd_pool_in_play{{pool="{POOL}",status="suspended"}} 0.0'
        ]

        signed(running, "pool", "resume", POOL, "--reason", "sign fixed", "--key", FILES[DANA])
        resumed = state_when(running, lambda d: sign_text(d).startswith("$"), "the meter back")
        assert not LIFE & pool_in(resumed, POOL).keys()
        assert in_play_metric(running, POOL) == [
            f'jackpotd_pool_in_play{{pool="{POOL}",status="in play"}} 1.0'
        ]


def test_44_pa_b_599_a_transfer_shows_on_both_pools_and_a_retired_pool_is_closed() -> None:
    with running_daemon(MORE) as running:
        running.site.key_file("mgr", running.keys).rename(running.keys / "mgr.key")
        before = pool_in(json.loads(fetched(running, "api/state")), POOL)
        held = before["meter_cents"] + before["reserve_cents"] + before["overflow_cents"]
        managers = ("--key", FILES[DANA], "--key", "mgr.key")
        reason = "table T1 removed"
        signed(running, "pool", "transfer", POOL, "--to", ANNEX, "--reason", reason, *managers)
        moved = state_when(
            running,
            lambda d: sign_text(d) == f"SUSPENDED transferred to {ANNEX}: {reason}",
            "the transfer on the source's sign",
        )
        source, target = pool_in(moved, POOL), pool_in(moved, ANNEX)
        assert source["status"] == "suspended"
        assert source["status_reason"] == f"transferred to {ANNEX}: {reason}"
        assert source["meter_cents"] == 0
        assert "status" not in target  # the receiving pool stays in play
        assert target["transferred_from"] == POOL
        assert held - 2 <= target["transferred_in_cents"] <= held + 2  # whole cents of exact sums

        signed(
            running, "pool", "retire", POOL, "--disposition", "transferred",
            "--reason", "floor closed", *managers,
        )  # fmt: skip
        closed = state_when(running, lambda d: sign_text(d) == "CLOSED", "CLOSED on the sign")
        source, target = pool_in(closed, POOL), pool_in(closed, ANNEX)
        assert source["status"] == "retired"
        assert "transferred_from" not in target  # its source no longer stands as transferred
        assert target["transferred_in_cents"] > 0
        assert in_play_metric(running, POOL) == [
            f'jackpotd_pool_in_play{{pool="{POOL}",status="retired"}} 0.0'
        ]
        assert in_play_metric(running, ANNEX) == [
            f'jackpotd_pool_in_play{{pool="{ANNEX}",status="in play"}} 1.0'
        ]


async def card_says(page: Page, pool_id: str, life: str) -> None:
    """Wait (bounded) until ``pool_id``'s card reads ``life`` under its meter."""
    await page.wait_for_function(
        '([pool, life]) => document.querySelector(`[data-pool="${pool}"] .life`)'
        "?.textContent === life",
        arg=[pool_id, life],
        timeout=WAIT_S * 1000,
    )


async def test_44_pa_b_599_the_display_page_shows_suspended_transferred_and_closed_pools() -> None:
    with running_daemon(MORE) as running:
        running.site.key_file("mgr", running.keys).rename(running.keys / "mgr.key")
        managers = ("--key", FILES[DANA], "--key", "mgr.key")
        async with headless() as browser:
            page = await open_display(browser, f"http://127.0.0.1:{running.web_port}/")
            card = page.locator(f'[data-pool="{POOL}"]')
            assert await card.get_attribute("data-status") == "in play"
            assert await card.locator(".life").inner_text() == ""

            signed(running, "pool", "suspend", POOL, "--reason", "sign dark", "--key", FILES[SAM])
            await card_says(page, POOL, "SUSPENDED — sign dark")
            assert "suspended" in (await card.get_attribute("class") or "")
            assert (await card.locator(".meter").inner_text()).startswith("$")  # kept, greyed

            reason = "table T1 removed"
            signed(running, "pool", "transfer", POOL, "--to", ANNEX, "--reason", reason, *managers)
            await card_says(page, POOL, f"SUSPENDED — transferred to {ANNEX}: {reason}")
            annex = pool_in(json.loads(fetched(running, "api/state")), ANNEX)
            dollars = f"${annex['transferred_in_cents'] / 100:,.2f}"
            await card_says(page, ANNEX, f"includes {dollars} transferred from {POOL}")

            signed(
                running, "pool", "retire", POOL, "--disposition", "transferred",
                "--reason", "floor closed", *managers,
            )  # fmt: skip
            await card_says(page, POOL, "CLOSED")
            assert await card.locator(".meter").inner_text() == "CLOSED"
            assert await card.get_attribute("data-status") == "retired"
