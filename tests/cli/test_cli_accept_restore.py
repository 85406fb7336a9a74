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
from typing import TYPE_CHECKING

import pytest
from support.cli.accept_restore import accept, played_on, restored, start

from controller.journal.high_water import high_water_path, read_high_water
from controller.ledger_journal.sqlite import Journal
from controller.runtime.checkpointing import StoredStateError

if TYPE_CHECKING:
    from pathlib import Path

    from support.ledger.approvals import Site

    from controller.security.controller_key import ControllerKey

__all__ = ["restored"]  # the fixture, used by name


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
