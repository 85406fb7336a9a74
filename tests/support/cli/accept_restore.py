"""A signed journal restored from its back-up, and ``jackpotd accept-restore`` at the command line.

The fixture :func:`restored` is a real signed journal (a manager, a second manager, a
supervisor with real keys) whose rows a real sequencer signed into the high-water file, put
back to a copy taken before them; :func:`start` is the daemon's own start-up
(``build_runtime``). Shared by tests/cli/test_cli_accept_restore*.py.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from typing import TYPE_CHECKING

import pytest

from controller.config.load import parse_config
from controller.events import FaultRecorded
from controller.journal.high_water import high_water_path
from controller.ledger_journal.sqlite import Journal
from controller.runtime.broadcast import Broadcast
from controller.runtime.heads import HeadSchedule
from controller.runtime.sequencer import Sequencer
from controller.service.wiring import build_runtime
from support.cli.cli_runs import run
from support.journal.journal_rig import opened_journal
from support.ledger.approvals import PASSPHRASE, Site

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.load import Config
    from controller.security.controller_key import ControllerKey


def configuration(path: Path) -> Config:
    text = (
        f'[controller]\nsite = "s"\nid = "c1"\njournal = "{path}"\n\n'
        '[[pools]]\nid = "pool-a"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        'pool = "pool-a"\n\n[web]\nport = 1\n'
    )
    return parse_config(text, "test.toml", path.parent)


def start(path: Path, key: ControllerKey) -> None:
    build_runtime(configuration(path), key=key).journal.close()


async def played_on(path: Path, key: ControllerKey, count: int) -> None:
    """``count`` rows journaled by a running sequencer, every head signed into the file."""
    halted: list[str] = []
    with Journal(path) as journal:
        sequencer = Sequencer(journal, Broadcast(), halt=lambda _status, why: halted.append(why))
        heads = HeadSchedule(key, "c1", high_water_path(str(path)), every_rows=1)
        heads.resume()
        heads.accepted(journal.state)  # as the daemon's start-up does
        sequencer.heads = heads
        runner = asyncio.create_task(sequencer.run())
        try:
            for _ in range(count):
                fault = FaultRecorded(f"fault-{uuid.uuid4()}", "2026-12-01T00:00:00Z", "t", "r")
                await sequencer.submit(fault)
        finally:
            await sequencer.close()
            runner.cancel()
    assert not halted, halted


@pytest.fixture
def restored(
    tmp_path: Path, key: ControllerKey, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Site]:
    """A signed journal restored from its back-up after rows the controller signed."""
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        site = Site.create(journal)
        site.enroll("mgr2", "manager", by="mgr")
        site.approve(configuration(path))
        for name in ("mgr", "mgr2", "sup1"):
            site.key_file(name, tmp_path)
    start(path, key)
    shutil.copy(path, tmp_path / "backup.db")
    asyncio.run(played_on(path, key, 4))
    path.unlink()
    shutil.copy(tmp_path / "backup.db", path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_1", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_2", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    return path, site


def accept(capsys: pytest.CaptureFixture[str], path: Path, *names: str) -> tuple[int, str, str]:
    keys = [word for name in names for word in ("--key", str(path.parent / f"{name}.key"))]
    return run(
        capsys, "accept-restore", "--db", str(path),
        "--reason", "disk lost, 06:00 back-up restored, incident 2211", *keys,
    )  # fmt: skip
