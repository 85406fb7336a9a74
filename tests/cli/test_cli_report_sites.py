"""``jackpotd report sites`` at central: each linked property's contributions, lag, reconciliation.

controller/cli/site_report.py; docs/wide-area.md, "Operations". A real central journal (SQLite)
written by central's own events: two properties linked with real Ed25519 keys; atlantic's
contributions and a straight flush applied, reconciled once, then two messages more;
boardwalk's totals misreport its wagers, so central's reconciliation halts its link. The
messages are journaled at times a little in the past, so that the lag is known.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from support.journal.journal_rig import POOL, STRAIGHT_FLUSH, opened_journal
from support.widearea.site_chains import WAGER, LinkedProperty

from controller.cli import main
from controller.clock import utc_iso
from controller.effects import decode_effects
from controller.ledger_journal.sqlite import Journal
from controller.wide_effects import AwardMade
from controller.widearea.messages import HitClaim

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent


def ago(seconds: float) -> str:
    """A journal time ``seconds`` before now."""
    return utc_iso(datetime.now(UTC) - timedelta(seconds=seconds))


@pytest.fixture
def sites_central(tmp_path: Path) -> Path:
    """Central's journal: atlantic reconciled through 4 then 2 more; boardwalk halted."""
    path = tmp_path / "central.db"
    atlantic, boardwalk = LinkedProperty("atlantic"), LinkedProperty("boardwalk")
    hand = HitClaim(POOL, "t1", "r4", 1, "x", "1", 1, tuple(STRAIGHT_FLUSH))
    with opened_journal(path) as journal:  # the pool, and a table carrying its paytable
        links = journal.append_many([atlantic.linked(ago(3600)), boardwalk.linked(ago(3600))])
        assert all(receipt.applied for receipt in links)
        events: list[AnyEvent] = [
            *atlantic.contributions(1, 3, ago(1800)),
            atlantic.say(hand, ago(1800)),
            atlantic.reported(ago(1700)),
            *atlantic.contributions(5, 2, ago(90)),
            *boardwalk.contributions(1, 2, ago(600)),
            boardwalk.reported(ago(500), wager_cents=WAGER),  # one wager short of central's
        ]
        receipts = journal.append_many(events)
        assert all(receipt.applied for receipt in receipts)
    return path


def report(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    status = main(["report", *words])
    out, err = capsys.readouterr()
    return status, out, err


def sites_of(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {site["site"]: site for site in document["sites"]}


def test_each_property_shows_what_central_applied_its_lag_and_its_last_reconciliation(
    sites_central: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = report(capsys, "sites", "--db", str(sites_central), "--json")
    assert status == 1  # boardwalk's link is halted
    assert "boardwalk" in err
    document = json.loads(out)
    sites = sites_of(document)
    atlantic = sites["atlantic"]
    with Journal(sites_central) as journal:
        (award,) = [
            effect
            for row in journal.rows()
            for effect in decode_effects(str(row["effects"] or "[]"))
            if isinstance(effect, AwardMade)
        ]
        head = journal.state.sites["atlantic"].link.head
    assert award.amount_cents > 0
    assert {key: atlantic[key] for key in (
        "pools", "contributions", "wagered_cents", "hits", "awarded_cents", "applied_through",
        "head", "reconciled_through", "unreconciled", "halted", "halted_reason",
    )} == {
        "pools": [POOL], "contributions": 5, "wagered_cents": 5 * WAGER, "hits": 1,
        "awarded_cents": award.amount_cents, "applied_through": 6, "head": head,
        "reconciled_through": 4, "unreconciled": 2, "halted": False, "halted_reason": None,
    }  # fmt: skip
    # The lag is since central journaled the property's last message, 90 s before the report.
    assert 90 <= atlantic["lag_s"] < 90 + 60
    last = atlantic["last_reconciliation"]
    assert (last["through"], last["matched"], last["problems"]) == (4, True, [])
    assert datetime.fromisoformat(last["at"]) < datetime.fromisoformat(atlantic["last_message_at"])


def test_a_mismatched_reconciliation_halts_the_link_and_the_report_says_why(
    sites_central: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = report(capsys, "sites", "--db", str(sites_central), "--json")
    document = json.loads(out)
    boardwalk = sites_of(document)["boardwalk"]
    assert status == 1
    assert document["halted"] == ["boardwalk"]
    assert boardwalk["halted"] is True
    assert boardwalk["halted_reason"].startswith("reconciliation: wager_cents:")
    last = boardwalk["last_reconciliation"]
    assert (last["through"], last["matched"]) == (2, False)
    assert last["problems"] == ["wager_cents: 500 at the property, 1000 at central"]
    assert (boardwalk["applied_through"], boardwalk["reconciled_through"]) == (2, 0)
    assert 600 <= boardwalk["lag_s"] < 600 + 60


def test_the_text_report_has_a_column_per_property_and_says_why_a_link_is_halted(
    sites_central: Path, capsys: pytest.CaptureFixture[str], zone: str
) -> None:
    status, out, _ = report(capsys, "--db", str(sites_central), "sites")  # the journal named first
    assert (status, zone) == (1, "America/New_York")
    lines = out.splitlines()
    assert lines[1].split("\t") == ["property", "atlantic", "boardwalk"]
    figures = {line.split("\t")[0]: line.split("\t")[1:] for line in lines[2:16]}
    assert figures["contributions"] == ["5", "2"]
    assert figures["wagered"] == ["$25.00", "$10.00"]
    assert figures["applied through site_seq"] == ["6", "2"]
    assert figures["reconciled through site_seq"] == ["4", "0"]
    assert figures["applied, not reconciled"] == ["2", "2"]
    assert all(at.endswith((" EST", " EDT")) for at in figures["last reconciliation"])
    assert figures["its totals"] == ["matched", "MISMATCHED"]
    assert figures["link"] == ["taking messages", "HALTED"]
    assert "boardwalk: halted: reconciliation: wager_cents" in out
    assert "boardwalk: reconciliation through 2: wager_cents: 500 at the property" in out


def test_a_journal_without_linked_properties_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lone.db"
    opened_journal(path).close()
    status, out, _ = report(capsys, "sites", "--db", str(path))
    assert status == 0
    assert out == "no linked properties: this journal is not central's (docs/wide-area.md)\n"
    status, out, _ = report(capsys, "sites", "--db", str(path), "--json")
    assert status == 0
    assert json.loads(out)["sites"] == []


def test_the_pools_report_is_still_the_command_without_a_word(
    sites_central: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = report(capsys, "--db", str(sites_central), "--json")
    assert status == 0
    (pool,) = json.loads(out)["pools"]
    assert (pool["pool"], pool["balanced"], pool["hits"]) == (POOL, True, 1)
    status, _, err = report(capsys, "--from", "2026-01-01", "sites", "--db", str(sites_central))
    assert status == 1
    assert "--from and --to are for the pools' report" in err


def test_a_row_someone_edited_into_nonsense_is_one_line_naming_it_not_a_figure(
    sites_central: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.closing(sqlite3.connect(sites_central)) as raw, raw:
        (seq,) = raw.execute("SELECT max(seq) FROM journal WHERE kind = 'site-reported'").fetchone()
        raw.execute('UPDATE journal SET event = \'{"not": "an event"}\' WHERE seq = ?', (seq,))
    status, out, err = report(capsys, "sites", "--db", str(sites_central), "--json")
    assert (status, out) == (1, "")
    assert err.startswith("jackpotd: ")
    assert f"row {seq}" in err
    assert len(err.splitlines()) == 1
