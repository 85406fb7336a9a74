"""``jackpotd accept-restore``: a restore from a back-up starts only once two managers accept it.

docs/operations.md, "Back up and restore the journal"; docs/security.md, "History never goes
back". A real signed journal (a manager, a second manager, two supervisors with real keys), the
daemon's own start-up (``build_runtime``) and a real sequencer signing heads into the
high-water file; the back-up restored is refused at start until two managers, at the command
line with their key files, accept the mark it loses; one manager, or a supervisor, cannot.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from typing import TYPE_CHECKING

import pytest
from support.approvals import PASSPHRASE, Site
from support.cli_runs import run
from support.journal_rig import opened_journal

from controller.config.load import parse_config
from controller.events import FaultRecorded
from controller.journal import Journal
from controller.journal.high_water import high_water_path, read_high_water
from controller.runtime.broadcast import Broadcast
from controller.runtime.checkpointing import StoredStateError
from controller.runtime.heads import HeadSchedule
from controller.runtime.sequencer import Sequencer
from controller.service.wiring import build_runtime

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


def test_a_restored_journal_starts_only_once_two_managers_accept_the_rows_it_loses(
    restored: tuple[Path, Site], key: ControllerKey, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _site = restored
    mark = read_high_water(high_water_path(str(path)))
    assert mark is not None
    with pytest.raises(StoredStateError, match="the journal went back"):
        start(path, key)
    status, _out, err = accept(capsys, path, "mgr")
    assert status == 1
    assert "dual control" in err  # one manager alone cannot
    status, _out, err = accept(capsys, path, "mgr", "sup1")
    assert status == 1
    assert "may not accept-restore" in err  # a supervisor may not
    status, out, err = accept(capsys, path, "mgr", "mgr2")
    assert (status, err) == (0, "")
    assert f"the controller signed row {mark.seq}" in out
    start(path, key)  # accepted: it starts, and signs the restored journal's head from here
    asyncio.run(played_on(path, key, 1))
    after = read_high_water(high_water_path(str(path)))
    assert after is not None
    with Journal(path) as journal:
        assert (after.seq, after.hash) == journal.head  # the restored history, signed on
    start(path, key)


def test_an_accepted_mark_accepts_no_other_rollback(
    restored: tuple[Path, Site], key: ControllerKey, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _site = restored
    assert accept(capsys, path, "mgr", "mgr2")[0] == 0
    start(path, key)
    shutil.copy(path, path.parent / "second-backup.db")
    asyncio.run(played_on(path, key, 3))
    path.unlink()
    shutil.copy(path.parent / "second-backup.db", path)
    with pytest.raises(StoredStateError, match="the journal went back"):
        start(path, key)
