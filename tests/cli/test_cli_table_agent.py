"""``jackpotd table-agent``: a key made on the agent, enrolled, rotated, listed and revoked.

docs/ha.md, "Signed forwarding". Run in-process as an operator runs them, on a real
journal whose authority a manager signs; the key file is 0600 (docs/operations.md).
"""

from __future__ import annotations

import stat
import uuid
from typing import TYPE_CHECKING

import msgspec
from support.cli.cli_runs import run
from support.journal.journal_rig import pool_opened, table_configured
from support.ledger.approvals import PASSPHRASE, Site, now

from controller.events import ConfigurationApproved
from controller.ledger.table_agents import agents_of
from controller.ledger_journal.sqlite import Journal
from controller.security.agent_key import load_agent_key

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_table_agent_key_enroll_rotate_list_revoke(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal)
        table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
        approval = ConfigurationApproved(
            f"approval-{uuid.uuid4().hex[:8]}", now(), "d", [pool_opened(), table], "mgr"
        )
        site.append(site.sign(approval, "mgr"))
        manager = site.key_file("mgr", tmp_path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    db = ("--db", str(database))

    status, out, _ = run(
        capsys, "table-agent", "key", "--table", "T1", "--out", str(tmp_path / "a.key")
    )
    assert status == 0
    key = load_agent_key(tmp_path / "a.key")
    assert stat.S_IMODE((tmp_path / "a.key").stat().st_mode) == 0o600
    assert key.public_key in out
    assert key.key_id in out

    enroll = ("table-agent", "enroll", "--table", "T1", "--key", str(manager), *db)
    status, _, err = run(capsys, *enroll, "--public-key", key.public_key)
    assert status == 0, err
    status, out, _ = run(capsys, "table-agent", "list", *db)
    assert f"T1  {key.key_id}" in out

    status, _, err = run(capsys, *enroll, "--public-key", key.public_key)  # the same key again
    assert status == 1
    assert "is or was enrolled" in err

    run(capsys, "table-agent", "key", "--table", "T1", "--out", str(tmp_path / "b.key"))
    rotated = load_agent_key(tmp_path / "b.key")
    status, _, err = run(capsys, *enroll, "--public-key", rotated.public_key)
    assert status == 0, err

    revoke = ("table-agent", "revoke", "--table", "T1", "--reason", "box replaced")
    status, _, err = run(capsys, *revoke, "--key", str(manager), *db)
    assert status == 0, err
    with Journal(database) as journal:
        assert agents_of(journal.state)["T1"].key_id == ""
    status, out, _ = run(capsys, "table-agent", "list", *db)
    assert "T1  revoked" in out
