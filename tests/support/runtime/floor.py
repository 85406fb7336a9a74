"""What the daemon-level tests share: a floor of simulated tables on one progressive pool.

The end-to-end tests of ``tests/e2e/`` (tests/support/runtime/played_tables.py),
``tests/faults/test_fault_sigkill.py`` and ``tests/faults/test_fault_serial_unplug.py`` run the
real daemon with one pool (progressive-1), play simulated tables and check the journal against
what the devices had acknowledged. The two fault tests put every table on a pty line
(:func:`write_config`).

Every test that starts ``python -m controller run`` first readies its journal with
:func:`approved_site`, as a site's manager does before the first start (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import socket
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
import pytest

from controller.config.load import load_config
from controller.events import BetSensed, BetsLocked
from controller.journal.sqlite.rows import read_rows
from controller.ledger_journal.sqlite import Journal
from drivers.simulator import SimulatedTable, TablePlan
from support.deploy.software_rig import approve_manifest
from support.ledger.approvals import Site
from support.runtime.controller_keys import KEY_LINE, write_controller_key

if TYPE_CHECKING:
    from collections.abc import Awaitable, Iterable, Mapping

    from controller.events import DeviceInput
    from drivers.simulator import DeviceLink

T = TypeVar("T")

POOL = "floor"
SEED_CENTS = 1_000_000
"""progressive-1's meter seed, $10,000."""
WAGER_CENTS = 100
"""progressive-1's one wager, $1."""
CONTRIBUTION_CENTS = 28
"""What each $1 wager adds to the meter at progressive-1's 28% (no reserve rate)."""
WAIT_S = 30.0
"""The bound on any one wait; a passing run takes a small fraction of it."""
DEVICE_KINDS = frozenset({"bet-sensed", "bets-locked", "card-dealt", "deal-complete"})


async def within(awaitable: Awaitable[T], what: str, seconds: float = WAIT_S) -> T:
    try:
        async with asyncio.timeout(seconds):
            return await awaitable
    except TimeoutError:
        pytest.fail(f"timed out after {seconds:g} s waiting for {what}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


ROOT = Path(__file__).resolve().parents[3]


def approved_site(config: Path, *, configuration: bool = True) -> Site:
    """Ready the journal ``config`` names for ``jackpotd run``; its operators' keys.

    ``run`` starts only on a journal whose authority is signed, with the configuration and the
    installed software approved by a manager: so a manager (``mgr``) and two supervisors
    (``sup1``, ``sup2``) are enrolled with keys (tests/support/ledger/approvals.py), then the
    manager signs the configuration's approval (unless ``configuration`` is false) and the manifest
    a child process sees (tests/support/deploy/software_rig.py).
    """
    settings = load_config(config)
    database = settings.controller.journal
    assert isinstance(database, Path), database  # a file: the floor's configuration names one
    database.parent.mkdir(parents=True, exist_ok=True)
    child = os.environ | {"PYTHONPATH": str(ROOT)}
    with Journal(database) as journal:
        site = Site.create(journal)
        if configuration:
            site.approve(settings)
        approve_manifest(site, config, child)
    return site


def write_config(tmp_path: Path, site: str, lines: Mapping[str, object], port: int) -> Path:
    """One pool (progressive-1) and a table on each pty line; short reopen backoff."""
    write_controller_key(tmp_path)
    text = (
        f'[controller]\nsite = "{site}"\nid = "{site}"\njournal = "{tmp_path / "journal.db"}"\n'
        f"{KEY_LINE}\n"
    )
    for table_id, device_path in lines.items():
        text += (
            f'[[serial]]\nname = "{table_id}-line"\nurl = "{device_path}"\n'
            f'table_id = "{table_id}"\nbackoff_initial_s = 0.02\nbackoff_cap_s = 0.2\n\n'
        )
    text += f'[[pools]]\nid = "{POOL}"\npaytable = "progressive-1"\n\n'
    for table_id in lines:
        text += (
            f'[[tables]]\nid = "{table_id}"\ntransport = "serial:{table_id}-line"\n'
            f'bonus = "fortune-1"\nprogressive = "progressive-1"\npool = "{POOL}"\n\n'
        )
    text += f'[web]\nhost = "127.0.0.1"\nport = {port}\n'
    path = tmp_path / "jackpotd.toml"
    path.write_text(text)
    return path


def locked_progressive_wagers(acked: Iterable[DeviceInput]) -> int:
    """Progressive chips on the spots at each acknowledged LOCK (each becomes a wager)."""
    locked, on_spots = 0, set[int]()
    for event in acked:
        if isinstance(event, BetSensed) and event.spot == "progressive":
            (on_spots.add if event.present else on_spots.discard)(event.seat)
        elif isinstance(event, BetsLocked):
            locked += len(on_spots)
            on_spots = set()
    return locked


def simulated(table_id: str, link: DeviceLink, seed: int) -> SimulatedTable:
    """Every seat plays the progressive; a shuffled 53-card deck, no rigged hands."""
    plan = TablePlan(
        table_id, occupancy=1.0, bet_probability=1.0, progressive_wager_cents=WAGER_CENTS
    )
    rng = random.Random(seed)  # noqa: S311 - simulated players
    return SimulatedTable(plan, link, rng, uuid.uuid4().hex[:8])


async def keep_playing(table: SimulatedTable, stop: asyncio.Event) -> None:
    """Rounds back to back (heartbeats meanwhile) until ``stop``; the round in play finishes."""
    beats = asyncio.create_task(table.heartbeats(0.5))
    try:
        while not stop.is_set():
            await table.play_round()
    finally:
        beats.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beats


async def get_json(url: str) -> Any:
    timeout = aiohttp.ClientTimeout(total=5)
    async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as response:
        assert response.status == 200, url
        return await response.json()


def journal_rows(path: Path) -> list[dict[str, Any]]:
    """Every journal row, read from the file as it is (read-only)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as database:
        return [row.values for row in read_rows(database)]
