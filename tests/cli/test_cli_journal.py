"""The supervisors' and auditors' commands over a real journal file.

docs/journal.md, "Supervisors' and auditors' commands".

The fixture is a site whose authority is signed, restored with ``jackpotd apply`` from a small
stream of signed events: a manager who enrolls themself and three supervisors (their keys in
files beside the journal, sealed under a passphrase: tests/support/ledger/approvals.py), the
manager's approval of a pool and a table, wagers and a round settled by a supervisor. The other
commands read and change it, signing with ``--key``.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING, TypeVar

import pytest
from support.ledger.approvals import PASSPHRASE, key_file

from controller.cli import main
from controller.events import (
    ConfigurationApproved,
    HitVerified,
    OperatorEnrolled,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
    encode_event,
)
from controller.ledger_journal.sqlite import Journal
from controller.security import keys
from controller.security.signatures import sign, with_signature

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent

E = TypeVar("E", bound="AnyEvent")

ENROLLED = "2026-11-28T09:00:00Z"
AT = "2026-11-29T15:00:00Z"
LATER = "2026-11-30T09:00:00Z"
FIVE_ACES = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
NOTHING = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]
MANAGER = "Morgan Manager"
SUPERVISORS = ("Dana Supervisor", "Lee", "Dana")


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


def key(journal_file: Path, name: str) -> str:
    """The key file of an operator of the fixture's site."""
    return str(journal_file.parent / f"{name}.key")


def signed_by(journal_file: Path, event: E, name: str) -> E:
    """``event`` signed with ``name``'s key file, as the command line signs it."""
    operator, private = keys.open_key(journal_file.parent / f"{name}.key", PASSPHRASE)
    return with_signature(event, sign(event, operator, private))  # type: ignore[return-value]


@pytest.fixture
def journal_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    database = tmp_path / "journal.db"
    operators = {name: keys.generate() for name in (MANAGER, *SUPERVISORS)}
    for name, private in operators.items():
        key_file(tmp_path, name, private)
    enrollments = [
        OperatorEnrolled(
            f"operator-{number}", ENROLLED, name, "supervisor" if number else "manager", "", "",
            "ed25519", MANAGER, public_key=keys.public_key_text(private),
        )
        for number, (name, private) in enumerate(operators.items())
    ]  # fmt: skip
    approval = ConfigurationApproved(
        "configuration-1",
        AT,
        "digest-of-the-site-configuration",
        [
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
        ],
        MANAGER,
        dual_control_cents=500_000,
        lockout_after=3,
    )
    entered: list[AnyEvent] = [
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
    events = [
        *(signed_by(database, event, MANAGER) for event in enrollments),
        signed_by(database, approval, MANAGER),
        *(signed_by(database, event, "Dana") for event in entered),
    ]
    feed = tmp_path / "events.jsonl"
    feed.write_bytes(b"\n".join(encode_event(event) for event in events))
    assert main(["apply", str(feed), "--db", str(database)]) == 0
    assert "9 events, 0 refused" in capsys.readouterr().out
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    return database


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_meters_show_every_required_meter(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "meters", "--db", str(journal_file), "--json")
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
    status, out, _ = run(capsys, "meters", "--db", str(journal_file))
    rows = dict(line.split("\t") for line in out.splitlines())
    assert rows["pool"] == "P1"
    assert rows["meter"] == "$10,000.00"
    assert rows["hits (jackpots won)"] == "1"
    assert rows["paid from the meter"] == "$1,000.05"


def test_hits_pending_and_verify_hit(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "hits", "--pending", "--db", str(journal_file), "--json")
    pending = json.loads(out)["pays"]
    assert status == 0
    assert [hit["payout_id"] for hit in pending] == ["s1/1/progressive"]
    assert pending[0]["tax_report"] is True
    status, out, _ = run(
        capsys, "verify-hit", "s1/1/progressive", "--key", key(journal_file, "Dana Supervisor"),
        "--db", str(journal_file),
    )  # fmt: skip
    assert status == 0
    assert "journaled as row" in out
    status, out, _ = run(capsys, "hits", "--pending", "--db", str(journal_file))
    assert "no pending pays" in out
    status, out, _ = run(capsys, "hits", "--db", str(journal_file))
    assert "PAID by Dana Supervisor" in out


def test_verify_hit_twice_is_refused_and_journaled(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verify_hit = ("verify-hit", "s1/1/progressive", "--key", key(journal_file, "Dana"))
    assert run(capsys, *verify_hit, "--db", str(journal_file))[0] == 0
    status, _, err = run(capsys, *verify_hit, "--db", str(journal_file))
    assert status == 1
    assert "no pending payout" in err
    with Journal(journal_file) as opened:
        outcomes = [row["outcome"] for row in opened.rows() if row["kind"] == "hit-verified"]
    assert outcomes == ["applied", "rejected"]


def test_adjust_needs_reason_and_respects_the_seed(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passphrase = journal_file.parent / "passphrase"
    passphrase.write_text(PASSPHRASE + "\n")
    # Dual control: two supervisors sign every adjustment, each with their key and passphrase.
    signers = (
        "--key", key(journal_file, "Lee"), "--passphrase-file", str(passphrase),
        "--key", key(journal_file, "Dana"), "--passphrase-file", str(passphrase),
    )  # fmt: skip
    status, _, err = run(
        capsys, "adjust", "P1", "--amount", "-5", "--reason", "typo", *signers,
        "--db", str(journal_file),
    )  # fmt: skip
    assert status == 1
    assert "below its seed" in err
    status, _, _ = run(
        capsys, "adjust", "P1", "--amount", "+$12.34", "--reason", "sensor double count",
        *signers, "--db", str(journal_file),
    )  # fmt: skip
    assert status == 0
    out = run(capsys, "meters", "--db", str(journal_file), "--json")[1]
    assert json.loads(out)["pools"][0]["meter_cents"] == 1_001_234
    status, _, err = run(
        capsys, "adjust", "P1", "--amount", "lots", "--reason", "x", *signers,
        "--db", str(journal_file),
    )  # fmt: skip
    assert status == 1
    assert "--amount" in err


def test_report_reconciles_each_pool(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "report", "--db", str(journal_file), "--json")
    (pool,) = json.loads(out)["pools"]
    assert status == 0
    assert pool["balanced"] is True
    assert pool["wins_cents"] == 100_005
    assert pool["contributions"]["meter"] == "56"
    status, out, _ = run(
        capsys, "report", "--from", "2026-11-30", "--db", str(journal_file), "--json"
    )
    (pool,) = json.loads(out)["pools"]
    assert pool["opening"]["meter"] == "1000056"
    assert pool["contributions"]["meter"] == "0"
    assert pool["house_funding_cents"] == 99_949
    assert pool["balanced"] is True
    status, _, err = run(capsys, "report", "--from", "yesterday", "--db", str(journal_file))
    assert status == 1
    assert "not an ISO date" in err


def test_verify_passes_then_detects_tampering(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "verify", "--db", str(journal_file))
    assert status == 0
    assert "journal OK: 9 rows" in out
    with sqlite3.connect(journal_file) as connection:  # row 9: the round that paid $1,000.05
        connection.execute(
            "UPDATE journal SET effects = replace(effects, '100005', '100006') WHERE seq = 9"
        )
    status, _, err = run(capsys, "verify", "--db", str(journal_file))
    assert status == 1
    assert "row 9" in err
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


# Operators and their keys (docs/security.md)


def test_a_wrong_passphrase_is_refused_and_journaled(
    journal_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tried = "not Dana's passphrase at all"
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", tried)
    status, _, err = run(
        capsys, "verify-hit", "s1/1/progressive", "--key", key(journal_file, "Dana"),
        "--db", str(journal_file),
    )  # fmt: skip
    assert status == 1
    assert "wrong passphrase for Dana" in err
    with sqlite3.connect(journal_file) as connection:
        failed = connection.execute(
            "SELECT event FROM journal WHERE kind = 'authentication-failed'"
        ).fetchall()
    assert [json.loads(event)["operator"] for (event,) in failed] == ["Dana"]
    assert tried.encode() not in journal_file.read_bytes()
    assert "s1/1/progressive" in run(capsys, "hits", "--pending", "--db", str(journal_file))[1]


def test_only_enrolled_operators_with_the_right_role_may_act(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eve = str(key_file(journal_file.parent, "Eve"))  # a well-made key nobody enrolled
    status, _, err = run(
        capsys, "verify-hit", "s1/1/progressive", "--key", eve, "--db", str(journal_file)
    )
    assert status == 1
    assert "'Eve' is not an enrolled operator" in err
    sam = str(key_file(journal_file.parent, "Sam"))
    status, _, err = run(
        capsys, "operator", "add", "Sam", "--role", "supervisor", "--public-key", sam,
        "--key", key(journal_file, "Dana"), "--db", str(journal_file),
    )  # fmt: skip
    assert status == 1
    assert "Dana (supervisor) may not enroll" in err
    status, _, err = run(
        capsys, "operator", "add", "Lee", "--role", "supervisor", "--public-key", sam,
        "--key", key(journal_file, MANAGER), "--db", str(journal_file),
    )  # fmt: skip
    assert status == 1
    assert "is the key of Sam, not Lee" in err


def test_the_first_operator_is_a_manager_who_signs_with_their_own_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    database = str(tmp_path / "fresh.db")
    pat, other = str(key_file(tmp_path, "Pat")), str(key_file(tmp_path, "Kim"))
    enroll = ("operator", "add", "Pat", "--public-key", pat, "--db", database)
    status, _, err = run(capsys, *enroll, "--role", "supervisor", "--key", pat)
    assert status == 1
    assert "the first operator enrolled with a key must be a manager" in err
    status, _, err = run(capsys, *enroll, "--role", "manager", "--key", other)
    assert status == 1
    assert "must sign their own enrollment" in err
    assert run(capsys, *enroll, "--role", "manager", "--key", pat)[0] == 0
    with Journal(database) as opened:
        assert opened.state.authority.signed
        assert list(opened.state.operators) == ["Pat"]


def test_the_journal_holds_public_keys_never_a_private_key_or_passphrase(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = journal_file.read_bytes()
    assert PASSPHRASE.encode() not in text
    for name in (MANAGER, *SUPERVISORS):
        _, private = keys.open_key(journal_file.parent / f"{name}.key", PASSPHRASE)
        assert keys.public_key_text(private).encode() in text
        secret = private.private_bytes_raw()
        for form in (secret, secret.hex().encode(), base64.b64encode(secret)):
            assert form not in text, name
    status, out, _ = run(capsys, "operator", "list", "--db", str(journal_file))
    assert status == 0
    assert "Dana Supervisor\tsupervisor\t" in out
    assert "0 failed attempts" in out
    assert "scrypt" not in out
    assert PASSPHRASE not in out


def test_the_ledger_refuses_a_supervisor_action_by_a_non_operator(journal_file: Path) -> None:
    verification = HitVerified("forged", AT, "s1/1/progressive", "Mallory")
    forged = with_signature(verification, sign(verification, "Mallory", keys.generate()))
    with Journal(journal_file) as opened:
        receipt = opened.append(forged)
    assert not receipt.applied
    assert "'Mallory' is not an enrolled operator" in receipt.reason


def test_a_manager_revokes_an_operator(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manager = ("--key", key(journal_file, MANAGER), "--db", str(journal_file))
    status, _, _ = run(capsys, "operator", "revoke", "Lee", "--reason", "left", *manager)
    assert status == 0
    listed = run(capsys, "operator", "list", "--db", str(journal_file))[1]
    assert "Lee" not in [line.split("\t")[0] for line in listed.splitlines()]
    status, _, err = run(capsys, "operator", "revoke", MANAGER, "--reason", "x", *manager)
    assert status == 1
    assert "last manager" in err
    status, _, err = run(
        capsys, "verify-hit", "s1/1/progressive", "--key", key(journal_file, "Lee"),
        "--db", str(journal_file),
    )  # fmt: skip
    assert status == 1
    assert "'Lee' is not an enrolled operator" in err


def test_void_by_a_supervisor_returns_the_wagers_and_reverses_their_contributions(
    journal_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Journal(journal_file) as opened:
        before = opened.state.pools["P1"]
        entered = WagerLocked("w4", LATER, "T1", "R2", 1, "progressive", 100)
        assert opened.append(signed_by(journal_file, entered, "Lee")).applied
        assert opened.state.pools["P1"].meter == before.meter + 28
    status, out, err = run(
        capsys, "void", "T1", "R2", "--reason", "misdeal", "--key", key(journal_file, "Dana"),
        "--db", str(journal_file),
    )  # fmt: skip
    assert status == 0, err
    with Journal(journal_file) as opened:
        assert opened.state.pools["P1"] == before
        assert ("T1", "R2") not in opened.state.rounds
    status, out, _ = run(capsys, "report", "--db", str(journal_file), "--json")
    assert status == 0
    (pool,) = json.loads(out)["pools"]
    assert pool["balanced"] is True
    assert pool["refunded_by_voids"] == {"meter": "28", "reserve": "0", "overflow": "0"}
