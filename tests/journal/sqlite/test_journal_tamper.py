"""The journal's hash chain (docs/journal.md): every row chained to the one before, tampering found.

Every kind of tampering is done with :mod:`sqlite3` on the real file, as an intruder would do
it, and ``jackpotd verify`` must find it.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest
from support.journal.journal_rig import (
    FIVE_ACES,
    NOTHING,
    POOL,
    opened_journal,
    rows_of,
    settle,
    wager,
)

from controller.journal import JournalError
from controller.journal.chain import GENESIS, row_hash
from controller.journal.sqlite.rows import row_at
from controller.ledger_journal.sqlite import Journal, verify

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


# --- the hash chain -------------------------------------------------------------------------


def test_journal_verify_good_journal_chains_every_row_to_the_one_before(played: Path) -> None:
    rows = rows_of(played)
    assert [row["seq"] for row in rows] == list(range(1, len(rows) + 1))
    previous = GENESIS
    for row in rows:
        assert row["prev_hash"] == previous
        assert row["hash"] == row_hash(previous, dict(row))
        previous = str(row["hash"])
    report = verify(played)
    assert (report.ok, report.rows, report.problems) == (True, len(rows), [])


def _canonical(document: object) -> str:
    """JSON as the journal writes it (sorted keys, no spaces), so only the edit differs."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def _update_event(
    raw: sqlite3.Connection, seq: int, change: Callable[[dict[str, Any]], None]
) -> None:
    text = raw.execute("SELECT event FROM journal WHERE seq = ?", [seq]).fetchone()[0]
    document = json.loads(text)
    change(document)
    new_text = _canonical(document)
    raw.execute("UPDATE journal SET event = ? WHERE seq = ?", [new_text, seq])


def _seq_of(raw: sqlite3.Connection, event_id: str) -> int:
    return int(raw.execute("SELECT seq FROM journal WHERE event_id = ?", [event_id]).fetchone()[0])


def _rehash(raw: sqlite3.Connection, seq: int) -> None:
    """Give the row the hash of what it now holds, chained to the row before."""
    found = row_at(raw, seq)
    assert found is not None
    digest = row_hash(found.values["prev_hash"], found.values)
    raw.execute("UPDATE journal SET hash = ? WHERE seq = ?", [bytes.fromhex(digest), seq])


def tamper_effect_text(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r1-w2")
    raw.execute(
        'UPDATE journal SET effects = replace(effects, \'"to_meter":"113/4"\', '
        '\'"to_meter":"114/4"\') WHERE seq = ?',
        [seq],
    )
    assert raw.total_changes == 1
    return [
        f"row {seq}: the row's contents do not match its hash",
        f"row {seq}: replay gives other effects than the journal records",
    ]


def tamper_event_amount(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r1-w2")
    _update_event(raw, seq, lambda event: event.update(amount_cents=500))
    return [
        f"row {seq}: the row's contents do not match its hash",
        (
            f"row {seq}: replay gives rejected 'the progressive wager is 100 cents, not 500', "
            "the journal says applied ''"
        ),
    ]


def tamper_hit_amount_in_effects(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r3-settle")
    effects = json.loads(
        raw.execute("SELECT effects FROM journal WHERE seq = ?", [seq]).fetchone()[0]
    )
    for effect in effects:
        if isinstance(effect, dict) and effect["effect"] == "payout":
            effect["win_cents"] += 100_000
    raw.execute(
        "UPDATE journal SET effects = ? WHERE seq = ?",
        [_canonical(effects), seq],
    )
    return [f"row {seq}: the row's contents do not match its hash"]


def tamper_delete_middle_row(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r2-w4")
    raw.execute("DELETE FROM journal WHERE seq = ?", [seq])
    return [
        f"row {seq + 1}: expected row {seq}; rows are missing",
        f"row {seq + 1}: the row's contents do not match its hash",
    ]


def tamper_swap_two_rows(raw: sqlite3.Connection) -> list[str]:
    first, second = _seq_of(raw, "r1-w1"), _seq_of(raw, "r1-w2")
    select = "SELECT event_id, kind, at, event, reason, effects, hash FROM journal WHERE seq = ?"
    update = (
        "UPDATE journal SET (event_id, kind, at, event, reason, effects, hash) "
        "= (?, ?, ?, ?, ?, ?, ?) WHERE seq = ?"
    )
    one = raw.execute(select, [first]).fetchone()
    two = raw.execute(select, [second]).fetchone()
    raw.execute("BEGIN")
    raw.execute("UPDATE journal SET event_id = 'tmp' WHERE seq = ?", [first])
    raw.execute(update, [*one, second])
    raw.execute(update, [*two, first])
    raw.execute("COMMIT")
    return [
        f"row {first}: the row's contents do not match its hash",
        f"row {second}: the row's contents do not match its hash",
    ]


def tamper_reorder_rows_keeping_content(raw: sqlite3.Connection) -> list[str]:
    """Move a row to the end (new seq), as if the order of events were rewritten."""
    seq = _seq_of(raw, "r3-w1")
    last = int(raw.execute("SELECT max(seq) FROM journal").fetchone()[0])
    raw.execute("UPDATE journal SET seq = ? WHERE seq = ?", [last + 1, seq])
    return [
        f"row {seq + 1}: expected row {seq}; rows are missing",
        f"row {last + 1}: the row's contents do not match its hash",
    ]


def tamper_pool_meter(raw: sqlite3.Connection) -> list[str]:
    text = raw.execute("SELECT state FROM pools WHERE pool_id = ?", [POOL]).fetchone()[0]
    document = json.loads(text)
    document["meter"] = str(Fraction(document["meter"]) + 10_000)
    raw.execute(
        "UPDATE pools SET state = ? WHERE pool_id = ?",
        [_canonical(document), POOL],
    )
    return [f"pool {POOL}: the stored meters differ from the replay"]


def tamper_pool_counter(raw: sqlite3.Connection) -> list[str]:
    text = raw.execute("SELECT state FROM pools WHERE pool_id = ?", [POOL]).fetchone()[0]
    document = json.loads(text)
    document["hits_count"] -= 1
    raw.execute(
        "UPDATE pools SET state = ? WHERE pool_id = ?",
        [_canonical(document), POOL],
    )
    return [f"pool {POOL}: the stored meters differ from the replay"]


def tamper_rehash_edited_row(raw: sqlite3.Connection) -> list[str]:
    seq = _seq_of(raw, "r1-w2")
    _update_event(raw, seq, lambda event: event.update(seat=5))
    _rehash(raw, seq)
    return [f"row {seq + 1}: the row's contents do not match its hash"]


def tamper_add_phantom_open_round(raw: sqlite3.Connection) -> list[str]:
    raw.execute("INSERT INTO rounds VALUES ('T1', 'r9', '[[1,\"progressive\",100]]')")
    return ["rounds: the stored open rounds differ from the replay"]


def tamper_revision(raw: sqlite3.Connection) -> list[str]:
    raw.execute("UPDATE meta SET value = '7' WHERE key = 'revision'")
    return ["configuration revision: replay gives 2, stored 7"]


TAMPERING = [
    tamper_effect_text,
    tamper_event_amount,
    tamper_hit_amount_in_effects,
    tamper_delete_middle_row,
    tamper_swap_two_rows,
    tamper_reorder_rows_keeping_content,
    tamper_pool_meter,
    tamper_pool_counter,
    tamper_rehash_edited_row,
    tamper_add_phantom_open_round,
    tamper_revision,
]


@pytest.mark.parametrize("tamper", TAMPERING, ids=lambda tamper: tamper.__name__)
def test_journal_verify_journal_is_append_only_and_tamper_evident_edit_detected(
    played: Path, connection: sqlite3.Connection, tamper: Callable[[sqlite3.Connection], list[str]]
) -> None:
    expected = tamper(connection)
    report = verify(played)
    assert not report.ok
    for problem in expected:
        assert problem in report.problems, report.problems


def test_journal_verify_rehashed_row_is_still_caught_by_the_next_rows_link_only(
    played: Path, connection: sqlite3.Connection
) -> None:
    seq = _seq_of(connection, "r1-w2")
    _update_event(connection, seq, lambda event: event.update(seat=5))
    _rehash(connection, seq)
    problems = verify(played).problems
    assert not [problem for problem in problems if problem.startswith(f"row {seq}:")]
    assert f"row {seq + 1}: the row's contents do not match its hash" in problems


def test_journal_verify_rehashing_the_last_row_is_caught_by_replay(
    played: Path, connection: sqlite3.Connection
) -> None:
    """No row follows the last one: the replay, not the chain, must catch its edit.

    docs/journal.md, "Verification: `jackpotd verify`".
    """
    seq = _seq_of(connection, "r3-settle")
    _update_event(connection, seq, lambda event: event["hands"].update({"1": NOTHING}))
    _rehash(connection, seq)
    problems = verify(played).problems
    assert f"row {seq}: replay gives other effects than the journal records" in problems
    assert f"pool {POOL}: the stored meters differ from the replay" in problems


@pytest.mark.parametrize(
    ("payout_id", "status"),
    [("r1-settle/1/progressive", "pending"), ("r1-settle/2/progressive", "paid")],
    ids=["pending-hit", "paid-loss"],
)
def test_journal_verify_payout_row_edited_in_place_is_detected(
    tmp_path: Path, payout_id: str, status: str
) -> None:
    """A payout row is what a supervisor is asked to pay and what reports read: it is checked.

    docs/journal.md, "Verification: `jackpotd verify`".
    """
    path = tmp_path / "journal.db"
    with opened_journal(path) as journal:
        journal.append(wager("r1-w1", "r1", 1))
        journal.append(wager("r1-w2", "r1", 2))
        journal.append(settle("r1-settle", "r1", {1: FIVE_ACES, 2: NOTHING}))
        assert set(journal.state.pending) == {"r1-settle/1/progressive"}
    assert verify(path).ok
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        raw.execute(
            "UPDATE payouts SET win_cents = win_cents * 10 + 500, from_meter_cents = "
            "from_meter_cents * 10 WHERE payout_id = ? AND status = ?",
            [payout_id, status],
        )
        assert raw.total_changes == 1
    report = verify(path)
    assert not report.ok
    assert any(payout_id in problem or "payouts" in problem for problem in report.problems), (
        report.problems
    )


@pytest.mark.parametrize(
    "garble",
    [
        "UPDATE pools SET state = 'garbage'",
        "UPDATE tables SET config = '{}'",
        "INSERT INTO rounds VALUES ('T1', 'r9', 'x')",
    ],
    ids=["pool-state", "table-config", "round-wagers"],
)
def test_journal_verify_garbled_materialized_row_is_reported_not_a_crash(
    played: Path, connection: sqlite3.Connection, garble: str
) -> None:
    """``verify`` reports a problem or raises JournalError; it does not crash on bad JSON.

    docs/journal.md, "Verification: `jackpotd verify`".
    """
    connection.execute(garble)
    try:
        report = verify(played)
    except JournalError:
        pass
    else:
        assert not report.ok
    with pytest.raises(JournalError):  # and the controller fails closed with its own error
        Journal(played)


def test_journal_verify_verify_of_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no such journal"):
        verify(tmp_path / "absent.db")
    assert not (tmp_path / "absent.db").exists()
