"""The supervisors' and auditors' commands over a real journal file (BRIEF §3, issue 4).

``jackpotd apply`` feeds a small stream of events; the other commands read and change it.
"""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest

from controller.cli import main
from controller.events import (
    HitVerified,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
    encode_event,
)
from controller.journal import Journal

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-11-29T15:00:00Z"
LATER = "2026-11-30T09:00:00Z"
FIVE_ACES = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
NOTHING = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


MANAGER_PIN = "483920"
SUPERVISOR_PIN = "771202"


def enroll(
    database: Path, name: str, role: str, pin: str, monkeypatch: pytest.MonkeyPatch, *by: str
) -> int:
    monkeypatch.setenv("JACKPOTD_NEW_PIN", pin)
    monkeypatch.setenv("JACKPOTD_PIN", MANAGER_PIN)
    return main(["operator", "add", name, "--role", role, *by, "--db", str(database)])


@pytest.fixture
def journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    events = [
        PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
        TableConfigured(
            "table",
            AT,
            "T1",
            {"fortune-1": paytable("fortune-1"), "progressive-1": paytable("progressive-1")},
            bonus="fortune-1",
            progressive="progressive-1",
            pool_id="P1",
            verification_cents=100_000,
        ),
        WagerLocked("w1", AT, "T1", "R1", 1, "progressive", 100),
        WagerLocked("w2", AT, "T1", "R1", 2, "progressive", 100),
        WagerLocked("w3", AT, "T1", "R1", 2, "bonus", 500),
        RoundSettled(
            "s1",
            LATER,
            "T1",
            "R1",
            NOTHING,
            {"1": FIVE_ACES, "2": ["Kc", "Kd", "Kh", "Ks", "5s", "6s", "9d"]},
        ),
    ]
    feed = tmp_path / "events.jsonl"
    feed.write_bytes(b"\n".join(encode_event(event) for event in events))
    database = tmp_path / "journal.db"
    assert main(["apply", str(feed), "--db", str(database)]) == 0
    assert "6 events, 0 refused" in capsys.readouterr().out
    assert enroll(database, "Morgan Manager", "manager", MANAGER_PIN, monkeypatch) == 0
    by_manager = ("--by", "Morgan Manager")
    assert (
        enroll(database, "Dana Supervisor", "supervisor", SUPERVISOR_PIN, monkeypatch, *by_manager)
        == 0
    )
    assert enroll(database, "Lee", "supervisor", SUPERVISOR_PIN, monkeypatch, *by_manager) == 0
    assert enroll(database, "Dana", "supervisor", SUPERVISOR_PIN, monkeypatch, *by_manager) == 0
    monkeypatch.setenv("JACKPOTD_PIN", SUPERVISOR_PIN)
    capsys.readouterr()
    return database


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_meters_show_every_required_meter(
    journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "meters", "--db", str(journal), "--json")
    (pool,) = json.loads(out)["pools"]
    assert status == 0
    # 2 x 28 cents, then five aces takes 10 % of $10,000.56 = $1,000.05 and the house reseeds.
    assert pool["wagers"] == 2
    assert pool["wagers_cents"] == 200
    assert pool["contributions_exact"] == "56"
    assert pool["hits"] == 1
    assert pool["paid_cents"] == 100_005
    assert pool["meter_cents"] == 1_000_000
    assert pool["house_funding_cents"] == 1_000_000 + 99_949
    assert pool["last_hits"][0]["line"] == "five-aces"
    status, out, _ = run(capsys, "meters", "--db", str(journal))
    assert "$10,000.00" in out
    assert "$1,000.05 paid from the meter" in out


def test_hits_pending_and_verify_hit(journal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "hits", "--pending", "--db", str(journal), "--json")
    pending = json.loads(out)["hits"]
    assert status == 0
    assert [hit["payout_id"] for hit in pending] == ["s1/1/progressive"]
    assert pending[0]["tax_report"] is True
    status, out, _ = run(
        capsys, "verify-hit", "s1/1/progressive", "--by", "Dana Supervisor", "--db", str(journal)
    )
    assert status == 0
    assert "journaled as row" in out
    status, out, _ = run(capsys, "hits", "--pending", "--db", str(journal))
    assert "no pending payouts" in out
    status, out, _ = run(capsys, "hits", "--db", str(journal))
    assert "PAID by Dana Supervisor" in out


def test_verify_hit_twice_is_refused_and_journaled(
    journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run(capsys, "verify-hit", "s1/1/progressive", "--by", "Dana", "--db", str(journal))[0] == 0
    )
    status, _, err = run(
        capsys, "verify-hit", "s1/1/progressive", "--by", "Dana", "--db", str(journal)
    )
    assert status == 1
    assert "no pending payout" in err


def test_adjust_needs_reason_and_respects_the_seed(
    journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(
        capsys,
        "adjust",
        "P1",
        "--amount",
        "-5",
        "--reason",
        "typo",
        "--by",
        "Lee",
        "--db",
        str(journal),
    )
    assert status == 1
    assert "below its seed" in err
    status, _, _ = run(
        capsys,
        "adjust",
        "P1",
        "--amount",
        "+$12.34",
        "--reason",
        "sensor double count",
        "--by",
        "Lee",
        "--db",
        str(journal),
    )
    assert status == 0
    out = run(capsys, "meters", "--db", str(journal), "--json")[1]
    assert json.loads(out)["pools"][0]["meter_cents"] == 1_001_234
    status, _, err = run(
        capsys,
        "adjust",
        "P1",
        "--amount",
        "lots",
        "--reason",
        "x",
        "--by",
        "Lee",
        "--db",
        str(journal),
    )
    assert status == 1
    assert "--amount" in err


def test_report_reconciles_each_pool(journal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "report", "--db", str(journal), "--json")
    (pool,) = json.loads(out)["pools"]
    assert status == 0
    assert pool["balanced"] is True
    assert pool["wins_cents"] == 100_005
    assert pool["contributions"]["meter"] == "56"
    status, out, _ = run(capsys, "report", "--from", "2026-11-30", "--db", str(journal), "--json")
    (pool,) = json.loads(out)["pools"]
    assert pool["opening"]["meter"] == "1000056"
    assert pool["contributions"]["meter"] == "0"
    assert pool["house_funding_cents"] == 99_949
    assert pool["balanced"] is True
    status, _, err = run(capsys, "report", "--from", "yesterday", "--db", str(journal))
    assert status == 1
    assert "not an ISO date" in err


def test_verify_passes_then_detects_tampering(
    journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "verify", "--db", str(journal))
    assert status == 0
    assert "journal OK: 10 rows" in out
    with sqlite3.connect(journal) as connection:
        connection.execute(
            "UPDATE journal SET effects = replace(effects, '100005', '100006') WHERE seq = 6"
        )
    status, _, err = run(capsys, "verify", "--db", str(journal))
    assert status == 1
    assert "row 6" in err
    assert "hash" in err


def test_commands_on_a_missing_journal_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, "meters", "--db", str(tmp_path / "none.db"))
    assert status == 1
    assert "no such journal" in err


def test_apply_reports_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    feed = tmp_path / "bad.jsonl"
    feed.write_bytes(encode_event(WagerLocked("w", AT, "T9", "R1", 1, "bonus", 500)))
    status, out, err = run(capsys, "apply", str(feed), "--db", str(tmp_path / "j.db"))
    assert status == 1
    assert "unknown table 'T9'" in err
    assert "1 events, 1 refused" in out
    feed.write_text('{"kind": "wager-locked", "event_id": "x"}')
    status, _, err = run(capsys, "apply", str(feed), "--db", str(tmp_path / "j.db"))
    assert status == 1
    assert "missing required field" in err


# Operators and PINs (issue 7 "Hardening")


def test_issue7_a_wrong_pin_is_refused_and_journaled(
    journal: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOTD_PIN", "000000")
    status, _, err = run(
        capsys, "verify-hit", "s1/1/progressive", "--by", "Dana", "--db", str(journal)
    )
    assert status == 1
    assert "wrong PIN for Dana" in err
    with sqlite3.connect(journal) as connection:
        faults = connection.execute("SELECT event FROM journal WHERE kind = 'fault'").fetchall()
    assert any("wrong-pin" in event for (event,) in faults)
    assert "s1/1/progressive" in run(capsys, "hits", "--pending", "--db", str(journal))[1]


def test_issue7_only_enrolled_operators_with_the_right_role_may_act(
    journal: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, _, err = run(
        capsys, "verify-hit", "s1/1/progressive", "--by", "Eve", "--db", str(journal)
    )
    assert status == 1
    assert "'Eve' is not an enrolled operator" in err
    status = enroll(journal, "Sam", "supervisor", "123456", monkeypatch, "--by", "Dana")
    assert status == 1
    assert "Dana (supervisor) may not enroll" in capsys.readouterr().err


def test_issue7_the_first_operator_must_be_a_manager(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "fresh.db"
    assert enroll(database, "Pat", "supervisor", "123456", monkeypatch) == 1
    assert "first operator enrolled must be a manager" in capsys.readouterr().err
    assert enroll(database, "Pat", "manager", "12345", monkeypatch) == 1
    assert "at least 6" in capsys.readouterr().err


def test_issue7_the_journal_holds_a_scrypt_hash_never_the_pin(
    journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = journal.read_bytes()
    assert SUPERVISOR_PIN.encode() not in text
    assert MANAGER_PIN.encode() not in text
    status, out, _ = run(capsys, "operator", "list", "--db", str(journal))
    assert status == 0
    assert "Dana Supervisor\tsupervisor" in out
    assert "scrypt" not in out


def test_issue7_the_ledger_refuses_a_supervisor_action_by_a_non_operator(journal: Path) -> None:
    with Journal(journal) as opened:
        receipt = opened.append(HitVerified("forged", AT, "s1/1/progressive", "Mallory"))
    assert not receipt.applied
    assert "'Mallory' is not an enrolled operator" in receipt.reason


def test_issue7_a_manager_revokes_an_operator(
    journal: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOTD_PIN", MANAGER_PIN)
    status, _, _ = run(
        capsys,
        "operator",
        "revoke",
        "Lee",
        "--reason",
        "left the company",
        "--by",
        "Morgan Manager",
        "--db",
        str(journal),
    )
    assert status == 0
    assert "Lee" not in run(capsys, "operator", "list", "--db", str(journal))[1]
    status, _, err = run(
        capsys,
        "operator",
        "revoke",
        "Morgan Manager",
        "--reason",
        "x",
        "--by",
        "Morgan Manager",
        "--db",
        str(journal),
    )
    assert status == 1
    assert "last manager" in err


def test_void_by_a_supervisor_returns_the_wagers_and_reverses_their_contributions(
    journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Journal(journal) as opened:
        before = opened.state.pools["P1"]
        opened.append(WagerLocked("w4", LATER, "T1", "R2", 1, "progressive", 100))
        assert opened.state.pools["P1"].meter == before.meter + 28
    status, out, err = run(
        capsys, "void", "T1", "R2", "--reason", "misdeal", "--by", "Dana", "--db", str(journal)
    )
    assert status == 0, err
    with Journal(journal) as opened:
        assert opened.state.pools["P1"] == before
        assert ("T1", "R2") not in opened.state.rounds
    status, out, _ = run(capsys, "report", "--db", str(journal), "--json")
    assert status == 0
    (pool,) = json.loads(out)["pools"]
    assert pool["balanced"] is True
    assert pool["refunded_by_voids"] == {"meter": "28", "reserve": "0", "overflow": "0"}
