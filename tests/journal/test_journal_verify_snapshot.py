"""``jackpotd verify`` on a live journal: one consistent snapshot, whatever commits meanwhile.

docs/operations.md runs ``jackpotd verify`` while the service runs. Verification reads the
rows, the materialized state and the payouts; a round the service commits between two of those
reads must not make a healthy journal fail. These tests commit rounds through a second writer
between verification's reads (a real second connection to the same SQLite file) and require a
pass: verification reads inside one read transaction, which in WAL mode keeps its snapshot
until it ends (docs/journal.md, "Verification").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.journal.journal_rig import FIVE_ACES, NOTHING, OTHER, rows_of, settle, wager

from controller.journal.sqlite import verify as verify_module
from controller.journal.sqlite.restore import load_state
from controller.ledger_journal.sqlite import Journal, verify

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    import sqlite_utils

    from controller.journal.domain import Domain
    from controller.ledger.state import LedgerState


def _play_round(journal: Journal, number: int) -> None:
    """One round through another connection: two wagers locked, then settled."""
    round_id = f"live-{number}"
    journal.append(wager(f"{round_id}-w1", round_id, 1))
    journal.append(wager(f"{round_id}-w2", round_id, 2))
    hands = {1: FIVE_ACES if number % 2 else NOTHING, 2: OTHER}
    journal.append(settle(f"{round_id}-settle", round_id, hands))


def test_verify_passes_when_a_round_commits_between_reading_the_rows_and_the_state(
    played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = len(rows_of(played))
    real_load_state = load_state
    commits: list[int] = []

    with Journal(played) as service:

        def load_state_after_a_commit(
            database: sqlite_utils.Database, domain: Domain[LedgerState]
        ) -> LedgerState:
            _play_round(service, len(commits) + 1)  # the service commits a round right now
            commits.append(service.head[0])
            return real_load_state(database, domain)

        monkeypatch.setattr(verify_module, "load_state", load_state_after_a_commit)
        report = verify(played)

    assert commits == [rows + 3], "the round did not commit in the middle of verification"
    assert report.ok, report.problems
    assert report.rows == rows
    assert report.head[0] == rows
    monkeypatch.undo()
    assert verify(played).ok  # and the journal with the round in it verifies too


def test_verify_passes_while_rounds_commit_as_it_reads_the_rows(played: Path) -> None:
    rows = len(rows_of(played))
    seen: list[tuple[int, int]] = []

    with Journal(played) as service:

        def progress(done: int, total: int) -> None:
            seen.append((done, total))
            _play_round(service, len(seen))

        report = verify(played, progress=progress)

    assert report.ok, report.problems
    assert report.rows == rows
    assert seen, "progress was never reported"
    assert seen[-1] == (rows, rows)
    assert verify(played).ok


def test_verify_reports_progress_every_so_many_rows_up_to_the_total(
    played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = len(rows_of(played))
    monkeypatch.setattr(verify_module, "PROGRESS_ROWS", 4)
    seen: list[tuple[int, int]] = []
    assert verify(played, progress=lambda done, total: seen.append((done, total))).ok
    expected = [(done, rows) for done in range(4, rows, 4)] + [(rows, rows)]
    assert seen == expected


def test_verify_reports_no_progress_on_an_empty_journal_but_its_end(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal(path).close()
    seen: list[tuple[int, int]] = []
    assert verify(path, progress=lambda done, total: seen.append((done, total))).ok
    assert seen == [(0, 0)]
