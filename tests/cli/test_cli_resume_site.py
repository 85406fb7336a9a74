"""``jackpotd resume-site`` at central: a manager resumes a halted link, nobody else can.

controller/cli/site_commands.py; docs/wide-area.md, "A halted link". A real central journal
(SQLite) whose authority is signed (a manager and two supervisors with real keys,
tests/support/ledger/approvals.py); boardwalk's totals misreport its wagers, so central's
reconciliation halts its link. A supervisor's resumption is refused and journaled as refused;
the manager's resumes the link, and the property's next totals are reconciled as matched.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.journal.journal_rig import opened_journal
from support.ledger.approvals import PASSPHRASE, Site
from support.widearea.site_chains import WAGER, LinkedProperty

from controller.effects import decode_effects
from controller.ledger_journal.sqlite import Journal
from controller.wide_effects import SiteLinkResumed

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def halted_central(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, LinkedProperty]:
    """Central's journal, signed authority, boardwalk's link halted by a mismatch."""
    path = tmp_path / "central.db"
    boardwalk = LinkedProperty("boardwalk")
    with opened_journal(path) as journal:
        site = Site.create(journal)
        site.append(site.sign(boardwalk.linked(), "mgr"))
        for event in boardwalk.contributions(1, 2):
            site.append(event)
        site.append(boardwalk.reported(wager_cents=WAGER))  # one wager short of central's
        assert journal.state.sites["boardwalk"].link.halted.startswith("reconciliation")
        for name in ("mgr", "sup1"):
            site.key_file(name, tmp_path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    return path, boardwalk


def resume(
    capsys: pytest.CaptureFixture[str], path: Path, key: Path, *words: str
) -> tuple[int, str, str]:
    return run(
        capsys, "resume-site", "boardwalk", "--reason", "totals software fixed, ticket 5120",
        "--key", str(key), "--db", str(path), *words,
    )  # fmt: skip


def test_only_a_manager_resumes_a_halted_link_and_central_reconciles_it_again(
    halted_central: tuple[Path, LinkedProperty], capsys: pytest.CaptureFixture[str]
) -> None:
    path, boardwalk = halted_central
    status, _out, err = resume(capsys, path, path.parent / "sup1.key")
    assert status == 1
    assert "link-site" in err  # a supervisor may not: the ledger says so, and journals it
    status, out, err = run(capsys, "report", "sites", "--db", str(path), "--json")
    assert status == 1  # still halted
    with Journal(path) as journal:
        why = journal.state.sites["boardwalk"].link.halted
    status, out, err = resume(capsys, path, path.parent / "mgr.key", "--json")
    assert (status, err) == (0, "")
    assert json.loads(out)["outcome"] == "applied"
    with Journal(path) as journal:
        *_, last = journal.rows()
        assert decode_effects(str(last["effects"])) == [SiteLinkResumed("boardwalk", 2, why)]
        assert not journal.state.sites["boardwalk"].link.halted
        # The property's next totals (at its next connection): reconciled, matched.
        assert journal.append(boardwalk.reported()).applied
        link = journal.state.sites["boardwalk"].link
        assert link.reconciled_through == 2
    status, out, err = run(capsys, "report", "sites", "--db", str(path), "--json")
    assert status == 0
    (shown,) = json.loads(out)["sites"]
    assert not shown["halted"]
    status, _out, err = resume(capsys, path, path.parent / "mgr.key")
    assert status == 1
    assert "not halted" in err
