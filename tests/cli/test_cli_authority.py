"""Authority through the command line: each attack of docs/security.md, refused where it enters.

The site is a real one: a configuration file (a pool and a table, verification at $1,000,
dual control at $5,000, lockout after 3 wrong passphrases), a journal whose authority is
signed (a manager ``mgr`` and supervisors ``sup1``, ``sup2`` enrolled with keys, their key files
beside it: tests/support/ledger/approvals.py), the configuration approved by the manager with
``jackpotd config approve``, and a five-aces hit of $1,000.02 awaiting verification, entered by a
supervisor through ``jackpotd apply``.

The attacks are those of the review: ``jackpotd apply`` of privileged events that nobody
allowed (a verification of a $1,000,000,000,000 payout, a manager enrolled, $50,000 added to a
reserve, terms changed "by config", a round settled with chosen cards, a manifest approved),
guessed passphrases, one supervisor alone, trivial passphrases, a supervisor approving a
configuration, the daemon started on a configuration nobody approved. Each is refused and
journaled; ``jackpotd verify`` still passes, since the refusals are in the journal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.twin_journals import write_config
from support.ledger.approvals import PASSPHRASE, Site
from support.runtime.floor import approved_site

from controller.cli import main
from controller.clock import utc_now as now
from controller.config.load import load_config
from controller.events import (
    ConfigurationApproved,
    HitVerified,
    ManifestApproved,
    MeterAdjusted,
    OperatorEnrolled,
    PoolOpened,
    PoolTermsChanged,
    RoundSettled,
    WagerLocked,
    encode_event,
)
from controller.ledger_journal.sqlite import Journal
from controller.runtime.broadcast import Broadcast
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from controller.security import keys
from controller.security.signatures import sign, with_signature

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.events import AnyEvent

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60
FIVE_ACES = ["As", "Ah", "Ad", "Ac", "Jk", "4d", "7c"]
STRAIGHT_FLUSH = ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h"]
DEALER = ["2d", "4c", "6s", "8d", "Tc", "Qc", "3s"]
PENDING = "s-R1/1/progressive"
"""The five-aces payout of the fixture, awaiting verification."""
TRILLION_CENTS = 100_000_000_000_000
"""$1,000,000,000,000."""


@dataclass
class Floor:
    """The fixture's site: its configuration, journal and key files; ``site`` signs events."""

    config: Path
    database: Path
    site: Site
    capsys: pytest.CaptureFixture[str]

    def key(self, name: str) -> str:
        """``name``'s key file (sealed under approvals.PASSPHRASE)."""
        return str(self.config.parent / f"{name}.key")

    def run(self, *argv: str) -> tuple[int, str, str]:
        """``jackpotd ARGV --db JOURNAL`` in process: the status, standard output and error."""
        status = main([*argv, "--db", str(self.database)])
        captured = self.capsys.readouterr()
        return status, captured.out, captured.err

    def apply(self, *events: AnyEvent) -> tuple[int, str, str]:
        """``jackpotd apply`` of ``events``, one JSON line each."""
        feed = self.config.parent / f"feed-{uuid.uuid4().hex[:8]}.jsonl"
        feed.write_bytes(b"\n".join(encode_event(event) for event in events))
        return self.run("apply", str(feed))

    def rows(self, kind: str) -> list[dict[str, object]]:
        """The journal's rows of one kind, in order."""
        with Journal(self.database) as journal:
            return [row for row in journal.rows() if row["kind"] == kind]

    def metrics(self) -> str:
        """What ``/metrics`` shows of this journal."""
        with Journal(self.database) as journal:
            return (
                ControllerMetrics(journal, Sequencer(journal, Broadcast()), None)
                .exposition("")[0]
                .decode()
            )


def played(round_id: str, hand: list[str], seat: int = 1) -> list[AnyEvent]:
    """A $1 progressive wager on ``seat`` and the round settled with ``hand`` on that seat.

    Dated now: ``jackpotd apply`` is a live append, where a signature's window must hold the
    controller's clock (docs/security.md, "Bound signatures").
    """
    at = now()
    return [
        WagerLocked(f"w-{round_id}", at, "T1", round_id, seat, "progressive", 100),
        RoundSettled(f"s-{round_id}", at, "T1", round_id, DEALER, {str(seat): hand}),
    ]


@pytest.fixture
def signed_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Floor:
    config = write_config(tmp_path)
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal)
    for name in site.keys:
        site.key_file(name, tmp_path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    signed_floor = Floor(config, database, site, capsys)
    status, out, err = signed_floor.run(
        "config", "approve", "--config", str(config), "--key", signed_floor.key("mgr")
    )
    assert status == 0, err
    assert "journaled as row 4" in out
    status, out, err = signed_floor.apply(
        *(signed_floor.site.sign(event, "sup1") for event in played("R1", FIVE_ACES))
    )
    assert status == 0, err
    with Journal(database) as journal:
        assert journal.state.authority.signed
        assert journal.state.authority.lockout_after == 3
        assert journal.state.pending[PENDING].win_cents == 100_002
    return signed_floor


# jackpotd apply: restore and replay, never a way round the ledger.


def test_apply_of_forged_or_unsigned_privileged_events_is_refused_journaled_and_verify_passes(
    signed_floor: Floor,
) -> None:
    def named(event: AnyEvent, name: str, key: Ed25519PrivateKey | None = None) -> AnyEvent:
        """Signed under ``name`` with ``key``, by default a key that is not theirs (a forgery)."""
        return with_signature(event, sign(event, name, key or keys.generate()))

    eve = keys.generate()
    raise_meter = MeterAdjusted("a-1", now(), "P1", "meter", TRILLION_CENTS, "sup1", "seed fix")
    verify_trillion = HitVerified("v-2", now(), "s-R9/2/progressive", "sup1")
    enroll_eve = OperatorEnrolled(
        "o-1", now(), "eve", "manager", "", "", "ed25519", "mgr",
        public_key=keys.public_key_text(eve),
    )  # fmt: skip
    attacks: dict[str, tuple[AnyEvent, str]] = {
        # A $1,000,000,000,000 meter, a seven-card straight flush dealt to order, and its
        # payout verified as paid; the hit awaiting verification verified by a forger.
        "a-1": (raise_meter, "unsigned"),
        "a-2": (
            named(msgspec.structs.replace(raise_meter, event_id="a-2"), "sup1"),
            "does not verify",
        ),
        "w-R9": (played("R9", STRAIGHT_FLUSH, seat=2)[0], "unsigned"),
        "s-R9": (played("R9", STRAIGHT_FLUSH, seat=2)[1], "unsigned"),
        "v-1": (HitVerified("v-1", now(), PENDING, "sup1"), "unsigned"),
        "v-2": (named(verify_trillion, "sup1"), "no pending payout"),
        "v-3": (named(HitVerified("v-3", now(), PENDING, "sup2"), "sup2"), "does not verify"),
        # A manager enrolled, unsigned, and signed by herself.
        "o-1": (enroll_eve, "unsigned"),
        "o-2": (
            named(msgspec.structs.replace(enroll_eve, event_id="o-2"), "eve", eve),
            "'eve' is not an enrolled operator",
        ),
        # $50,000 added to the reserve: unsigned, then by one real supervisor.
        "a-3": (MeterAdjusted("a-3", now(), "P1", "reserve", 5_000_000, "sup1", "x"), "unsigned"),
        "a-4": (
            signed_floor.site.sign(
                MeterAdjusted("a-4", now(), "P1", "reserve", 5_000_000, "sup1", "x"), "sup1"
            ),
            "dual control",
        ),
        # The terms changed "by config", outside a manager's approval.
        "t-1": (
            PoolTermsChanged(
                "t-1", now(), "P1", "progressive-1", 100, Decimal("0.99"), "config", "x"
            ),
            "signed configuration approval",
        ),
        "p-1": (
            PoolOpened("p-1", now(), "P2", "progressive-1", 100, Decimal("0.99")),
            "signed configuration approval",
        ),
        "c-1": (
            ConfigurationApproved("c-1", now(), "forged", [], "mgr", lockout_after=100),
            "unsigned",
        ),
        # Modified software approved.
        "m-1": (
            ManifestApproved("m-1", now(), "9.9", "planted", "forged", [("x.py", "0" * 64)], "mgr"),
            "unsigned",
        ),
        "m-2": (
            named(ManifestApproved("m-2", now(), "9.9", "planted", "forged", [], "mgr"), "mgr"),
            "does not verify",
        ),
    }
    with Journal(signed_floor.database) as journal:
        before = journal.state
    status, out, err = signed_floor.apply(*(event for event, _ in attacks.values()))
    assert status == 1
    assert f"{len(attacks)} events, {len(attacks)} refused" in out
    refusals = dict(line.split(": refused: ", 1) for line in err.splitlines())
    for event_id, (_, reason) in attacks.items():
        (refusal,) = [text for where, text in refusals.items() if where.endswith(f" {event_id}")]
        assert reason in refusal, (event_id, refusal)
    with Journal(signed_floor.database) as journal:
        outcomes = {
            row["event_id"]: row["outcome"] for row in journal.rows() if row["event_id"] in attacks
        }
        after = journal.state
    assert outcomes == dict.fromkeys(attacks, "rejected")
    assert after.pools == before.pools
    assert after.pending == before.pending
    assert after.operators == before.operators
    assert after.authority == before.authority
    assert after.manifest is None
    status, out, _ = signed_floor.run("verify", "--json")
    assert status == 0
    assert json.loads(out)["ok"] is True
    status, out, _ = signed_floor.run("report", "--json")
    assert json.loads(out)["pools"][0]["balanced"] is True
    assert PENDING in signed_floor.run("hits", "--pending")[1]


# Lockouts.


def test_three_wrong_passphrases_through_verify_hit_lock_the_operator_out(
    signed_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    tried = "a guess at sup1's passphrase"
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", tried)
    for attempt in (1, 2, 3):
        status, _, err = signed_floor.run("verify-hit", PENDING, "--key", signed_floor.key("sup1"))
        assert status == 1
        assert err == f"jackpotd: {signed_floor.key('sup1')}: wrong passphrase for sup1\n"
        with Journal(signed_floor.database) as journal:
            operator = journal.state.operators["sup1"]
        assert (operator.failures, operator.locked) == (attempt, attempt == 3)
    failed = signed_floor.rows("authentication-failed")
    assert [json.loads(str(row["event"]))["operator"] for row in failed] == ["sup1"] * 3
    assert [json.loads(str(row["effects"]))[0]["locked"] for row in failed] == [False, False, True]
    assert all(tried not in str(row["event"]) for row in failed)
    metrics = signed_floor.metrics()
    assert "jackpotd_operators_locked_out 1.0" in metrics
    assert "jackpotd_operator_failed_authentications 3.0" in metrics
    listed = {
        line.split("\t")[0]: line for line in signed_floor.run("operator", "list")[1].splitlines()
    }
    assert "\tLOCKED OUT until " in listed["sup1"]
    assert listed["sup2"].endswith("\t0 failed attempts")

    # Locked out: the right passphrase no longer lets sup1 sign, and the refusal is journaled.
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    status, _, err = signed_floor.run("verify-hit", PENDING, "--key", signed_floor.key("sup1"))
    assert status == 1
    assert "sup1 is locked out after failed authentications" in err
    assert [row["outcome"] for row in signed_floor.rows("hit-verified")] == ["rejected"]
    assert PENDING in signed_floor.run("hits", "--pending")[1]


def test_only_a_manager_unlocks_a_locked_out_operator(
    signed_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", "not the passphrase at all")
    for _ in range(3):
        assert signed_floor.run("verify-hit", PENDING, "--key", signed_floor.key("sup1"))[0] == 1
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    unlock = ("operator", "unlock", "sup1", "--reason", "identity checked in person", "--key")
    status, _, err = signed_floor.run(*unlock, signed_floor.key("sup2"))
    assert status == 1
    assert "sup2 (supervisor) may not unlock" in err
    status, out, err = signed_floor.run(*unlock, signed_floor.key("mgr"))
    assert status == 0, err
    assert "journaled as row" in out
    metrics = signed_floor.metrics()
    assert "jackpotd_operators_locked_out 0.0" in metrics
    assert "jackpotd_operator_failed_authentications 0.0" in metrics
    status, _, err = signed_floor.run("verify-hit", PENDING, "--key", signed_floor.key("sup1"))
    assert status == 0, err
    assert "PAID by sup1" in signed_floor.run("hits")[1]


# Dual control.


def test_adjust_with_one_key_is_refused_and_with_two_operators_keys_is_applied(
    signed_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    adjust = ("adjust", "P1", "--amount", "+$12.34", "--reason", "sensor double count")
    with Journal(signed_floor.database) as journal:
        meter = journal.state.pools["P1"].meter
    status, _, err = signed_floor.run(*adjust, "--key", signed_floor.key("sup1"))
    assert status == 1
    assert "adjust needs the signatures of 2 different operators (dual control), not 1" in err
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_1", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_2", PASSPHRASE)
    status, _, err = signed_floor.run(
        *adjust, "--key", signed_floor.key("sup1"), "--key", signed_floor.key("sup1")
    )
    assert status == 1
    assert "adjust: sup1 signed twice" in err
    assert [row["outcome"] for row in signed_floor.rows("meter-adjusted")] == ["rejected"] * 2
    with Journal(signed_floor.database) as journal:
        assert journal.state.pools["P1"].meter == meter
    status, _, err = signed_floor.run(
        *adjust, "--key", signed_floor.key("sup1"), "--key", signed_floor.key("sup2")
    )
    assert status == 0, err
    applied = signed_floor.rows("meter-adjusted")[-1]
    assert applied["outcome"] == "applied"
    event = json.loads(str(applied["event"]))
    assert (event["by"], [s["operator"] for s in event["signatures"]]) == ("sup1", ["sup1", "sup2"])
    with Journal(signed_floor.database) as journal:
        assert journal.state.pools["P1"].meter == meter + 1_234


def test_verifying_a_payout_at_or_above_the_dual_control_amount_needs_two_operators(
    signed_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, _, err = signed_floor.apply(
        *(signed_floor.site.sign(event, "sup2") for event in played("R2", STRAIGHT_FLUSH))
    )
    assert status == 0, err
    payout = "s-R2/1/progressive"
    with Journal(signed_floor.database) as journal:
        assert journal.state.pending[payout].win_cents >= 500_000
    status, _, err = signed_floor.run("verify-hit", payout, "--key", signed_floor.key("sup1"))
    assert status == 1
    assert "verify-hit needs the signatures of 2 different operators (dual control)" in err
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_1", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_2", PASSPHRASE)
    status, _, err = signed_floor.run(
        "verify-hit", payout, "--key", signed_floor.key("sup1"), "--key", signed_floor.key("sup2")
    )
    assert status == 0, err
    status, out, _ = signed_floor.run("hits", "--pending")
    assert payout not in out
    assert PENDING in out  # below the dual-control amount: one supervisor verifies it
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    assert signed_floor.run("verify-hit", PENDING, "--key", signed_floor.key("sup2"))[0] == 0


# Trivial passphrases.


@pytest.mark.parametrize(
    ("passphrase", "reason"),
    [
        ("000000", "at least 12 characters"),
        ("password123456", "more than a well-known password"),
        ("abcdefghijkl", "not a run of characters"),
        ("123456789012", "not a run of characters"),
        ("Dana Reyes forever", "the operator's name"),
        ("danareyes-1984!", "the operator's name"),
    ],
)
def test_operator_key_refuses_a_trivial_passphrase(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    passphrase: str,
    reason: str,
) -> None:
    monkeypatch.setenv("JACKPOTD_NEW_PASSPHRASE", passphrase)
    out = tmp_path / "dana.key"
    assert main(["operator", "key", "Dana Reyes", "--out", str(out)]) == 1
    assert reason in capsys.readouterr().err
    assert not out.exists()


def test_operator_key_accepts_a_passphrase_that_is_not_trivial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOTD_NEW_PASSPHRASE", PASSPHRASE)
    out = tmp_path / "dana.key"
    assert main(["operator", "key", "Dana Reyes", "--out", str(out)]) == 0
    assert "key of Dana Reyes, public key " in capsys.readouterr().out
    assert out.stat().st_mode & 0o777 == 0o600
    assert keys.open_key(out, PASSPHRASE)[0] == "Dana Reyes"


# Approving a configuration.


def test_config_approve_by_a_supervisor_is_refused(signed_floor: Floor) -> None:
    text = signed_floor.config.read_text().replace(
        'dual_control_amount = "$5,000"', 'dual_control_amount = "$1,000,000"'
    )
    signed_floor.config.write_text(text)
    with Journal(signed_floor.database) as journal:
        before = journal.state.authority
    status, _, err = signed_floor.run(
        "config", "approve", "--config", str(signed_floor.config), "--key", signed_floor.key("sup1")
    )
    assert status == 1
    assert "approve-config: sup1 (supervisor) may not approve-config" in err
    assert [row["outcome"] for row in signed_floor.rows("configuration-approved")] == [
        "applied",
        "rejected",
    ]
    with Journal(signed_floor.database) as journal:
        assert journal.state.authority == before
    status, _, err = signed_floor.run(
        "config", "approve", "--config", str(signed_floor.config), "--key", signed_floor.key("mgr")
    )
    assert status == 0, err
    with Journal(signed_floor.database) as journal:
        assert journal.state.authority.dual_control_cents == 100_000_000
        assert journal.state.authority.configuration == load_config(signed_floor.config).digest


@pytest.mark.slow
def test_run_on_an_unapproved_configuration_exits_with_one_line_saying_how_to_approve(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    database = tmp_path / "journal.db"
    site = approved_site(config, configuration=False)  # the software only
    manager = site.key_file("mgr", tmp_path)
    refused = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=ROOT,
    )  # fmt: skip
    assert refused.returncode == 1
    assert refused.stdout == ""
    # One line says what is wrong and how to approve (the log lines before it are the start-up
    # check's).
    assert "Traceback" not in refused.stderr
    (line,) = [line for line in refused.stderr.splitlines() if line.startswith("jackpotd: ")]
    assert refused.stderr.endswith(line + "\n")
    assert line == (
        f"jackpotd: {config}: the configuration changes 2 pools or tables, or its authority "
        "settings, and no manager has approved it: "
        f"jackpotd config approve --config {config} --key KEY_FILE --db {database}"
    )
    with Journal(database) as journal:
        assert journal.state.pools == {}
        assert journal.state.authority.configuration is None

    # The manager runs the command the line gives, with their key file; then it starts.
    approve = subprocess.run(
        [sys.executable, "-m", "controller", "config", "approve", "--config", str(config),
         "--key", str(manager), "--db", str(database)],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=ROOT,
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr
    started = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert started.stdout is not None
        assert "meter display and /metrics at" in started.stdout.readline()
        started.send_signal(signal.SIGTERM)
        started.wait(timeout=WAIT_S)
    finally:
        if started.poll() is None:
            started.kill()
            started.wait(timeout=WAIT_S)
    assert started.returncode == 0
