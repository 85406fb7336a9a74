"""A signed site whose ``jackpotd apply`` is fed a table's own words (a round, table status).

The fixture :func:`floor` is a real journal whose authority is signed (tests/support/
approvals.py), its configuration approved with ``jackpotd config approve`` (a pool ``P1`` and a
table ``T1``); :func:`forged_round` is a whole round with a natural seven-card straight flush as
a bet sensor, the dealer's button and the shoe would send it. Shared by the tests of what
``jackpotd apply`` refuses (tests/cli/test_cli_apply_table_word.py and its neighbours).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete, encode_event
from controller.ledger_journal.sqlite import Journal
from support.cli import cli_runs
from support.journal.twin_journals import write_config
from support.ledger.approvals import PASSPHRASE, Site

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent

AT = "2026-12-01T15:00:00Z"
STRAIGHT_FLUSH = ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h"]
DEALER = ["2d", "4c", "6s", "8d", "Tc", "Qc", "3s"]


def forged_round(round_id: str = "R9") -> list[AnyEvent]:
    """A $1 progressive wager on seat 1, locked, dealt a straight flush, the deal complete."""
    events: list[AnyEvent] = [
        BetSensed("T1/sensor/1", AT, "T1", "sensor", 1, 1, "progressive", True, 100),
        BetsLocked("T1/dealer/1", AT, "T1", "dealer", 1, round_id),
    ]
    seq = 0
    for position, hand in ((1, STRAIGHT_FLUSH), (0, DEALER)):
        for card in hand:
            seq += 1
            events.append(
                CardDealt(f"T1/shoe/{seq}", AT, "T1", "shoe", seq, round_id, position, card)
            )
    events.append(DealComplete(f"T1/shoe/{seq + 1}", AT, "T1", "shoe", seq + 1, round_id))
    return events


@dataclass
class Floor:
    """The site: its journal, its key files, the command line run in-process."""

    database: Path
    site: Site
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> tuple[int, str, str]:
        """``jackpotd ARGV --db JOURNAL`` in process: status, output, errors."""
        return cli_runs.run(self.capsys, *argv, "--db", str(self.database))

    def apply(self, *events: AnyEvent) -> tuple[int, str, str]:
        """``jackpotd apply`` of ``events``, one JSON line each, from a file beside the journal."""
        feed = self.database.with_name(f"feed-{uuid.uuid4().hex[:8]}.jsonl")
        feed.write_bytes(b"\n".join(map(encode_event, events)))
        return self.run("apply", str(feed))

    def meters(self) -> tuple[object, ...]:
        """What money and tables the journal's state holds."""
        with Journal(self.database) as journal:
            state = journal.state
            return (state.pools, state.pending, state.rounds, state.table_states)

    def rows(self) -> list[dict[str, object]]:
        """The journal's rows, in order."""
        with Journal(self.database) as journal:
            return list(journal.rows())


@pytest.fixture
def floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Floor:
    config = write_config(tmp_path)
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal)
    for name in site.keys:
        site.key_file(name, tmp_path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    floor = Floor(database, site, capsys)
    key = str(tmp_path / "mgr.key")
    status, _, err = floor.run("config", "approve", "--config", str(config), "--key", key)
    assert status == 0, err
    with Journal(database) as journal:
        assert journal.state.authority.signed
        assert "T1" in journal.state.tables
    return floor
