"""A journal of passkey-signed actions verifies offline, and keeps what a re-check needs.

The journal holds each assertion whole (docs/security.md, "Passkeys"), so ``jackpotd verify``
replays every one through the ledger again, with the sign counts the replay rebuilds, without
the browser, the web server or the authenticator. One bit of a stored assertion changed, and
the hash chain written again over it so that only the re-check can tell: verify fails on that
row, naming the passkey's refusal.

A live append that refuses an assertion whose sign count went back (a cloned authenticator)
journals the alert, ``passkey-clone-suspected``, in the row right after the refusal, in the same
transaction: the credential is held at once, the writer gets one receipt for what it submitted,
a resend journals nothing more, and the journal so written verifies offline.
"""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.cli.cli_runs import run
from support.journal.journal_rig import FIVE_ACES, pool_opened, settle, table_configured, wager
from support.ledger.approvals import Site
from support.web.authenticator import Authenticator, passkey_enrollment, passkey_signed

from controller.clock import utc_now as now
from controller.events import ConfigurationApproved, HitVerified, encode_event
from controller.journal.chain import row_hash
from controller.journal.rows import stored_row
from controller.journal.sqlite.rows import read_rows
from controller.ledger.passkeys import CLONE, passkeys_of
from controller.ledger_journal.sqlite import Journal, verify
from controller.passkey_events import PasskeyCloneSuspected
from controller.security.webauthn_signatures import b64url, from_b64url

if TYPE_CHECKING:
    from pathlib import Path


def _pay(site: Site, number: int | str) -> str:
    round_id = f"r-{number}"
    site.append(site.sign(wager(f"{round_id}-w", round_id, 1), "sup1"))
    site.append(site.sign(settle(f"{round_id}-s", round_id, {1: FIVE_ACES}), "sup1"))
    return f"{round_id}-s/1/progressive"


def _passkey_site(journal: Journal) -> tuple[Site, Authenticator]:
    """A signed journal with one pool and table, and sup1's passkey enrolled by the manager."""
    site = Site.create(journal)
    table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
    approval = ConfigurationApproved(
        f"approval-{uuid.uuid4().hex[:8]}", now(), "digest-1", [pool_opened(), table], "mgr",
        dual_control_cents=5_000_000,
    )  # fmt: skip
    site.append(site.sign(approval, "mgr"))
    key = Authenticator()
    site.append(site.sign(passkey_enrollment(journal.state, "sup1", key), "mgr"))
    return site, key


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    """A journal whose pays were verified by sup1's passkey, three times."""
    path = tmp_path / "pit.db"
    with Journal(path) as journal:
        site, key = _passkey_site(journal)
        for number in range(3):
            event = HitVerified(f"verify-{number}", now(), _pay(site, number), "sup1")
            site.append(passkey_signed(journal.state, event, "sup1", key))
    return path


def test_a_journal_of_passkey_signed_actions_verifies_offline(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "verify", "--db", str(journal_path))
    assert status == 0, (out, err)


def _spoiled(event: HitVerified, field: str) -> HitVerified:
    """``event`` with one bit of its assertion's ``field`` flipped."""
    assert not isinstance(event.signatures, msgspec.UnsetType)
    signature = event.signatures[0]
    assertion = signature.webauthn
    assert not isinstance(assertion, msgspec.UnsetType)
    if field == "signature":
        data = from_b64url(signature.signature, field)
        flipped = b64url(data[:10] + bytes([data[10] ^ 1]) + data[11:])
        signature = msgspec.structs.replace(signature, signature=flipped)
    else:
        data = from_b64url(getattr(assertion, field), field)
        flipped = b64url(data[:5] + bytes([data[5] ^ 1]) + data[6:])
        assertion = msgspec.structs.replace(assertion, **{field: flipped})
        signature = msgspec.structs.replace(signature, webauthn=assertion)
    return msgspec.structs.replace(event, signatures=[signature])


def _tamper(path: Path, field: str) -> int:
    """Spoil the last verification's assertion in the file; write the chain again after it."""
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        rows = list(read_rows(raw))
        (target,) = [row for row in rows if row.values["event_id"] == "verify-2"]
        assert isinstance(target.event, HitVerified)
        spoiled = _spoiled(target.event, field)
        target.values["event"] = encode_event(spoiled).decode()
        previous = rows[0].values["prev_hash"]
        for row in rows:
            event = spoiled if row is target else row.event
            assert event is not None
            assert row.effects is not None
            row.values["hash"] = previous = row_hash(previous, row.values)
            columns = stored_row(row.values, event, row.effects)
            raw.execute(
                "UPDATE journal SET event = ?, hash = ? WHERE seq = ?",
                [columns[4], columns[7], row.values["seq"]],
            )
        return int(target.values["seq"])


@pytest.mark.parametrize("field", ["authenticator_data", "client_data_json", "signature"])
def test_one_bit_of_a_stored_assertion_changed_fails_verify(
    journal_path: Path, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    seq = _tamper(journal_path, field)
    report = verify(journal_path)
    assert not report.ok
    assert any(
        problem.startswith(f"row {seq}: replay gives rejected") and "passkey" in problem
        for problem in report.problems
    ), report.problems
    chain = ("chain is broken", "do not match its hash")
    assert not any(words in problem for problem in report.problems for words in chain)
    status, _, _ = run(capsys, "verify", "--db", str(journal_path))
    assert status != 0


def _journal_rows(path: Path) -> list[tuple[int, str, str, str]]:
    """Each row of the file: its seq, event id, kind and outcome."""
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        return [
            (row.values["seq"], row.values["event_id"], row.values["kind"], row.values["outcome"])
            for row in read_rows(raw)
        ]


def test_a_cloned_authenticators_refusal_journals_the_alert_right_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pit.db"
    with Journal(path) as journal:
        site, key = _passkey_site(journal)
        clone = key.clone()  # the credential copied while its count was where the key's was
        for number in range(2):
            event = HitVerified(f"verify-{number}", now(), _pay(site, number), "sup1")
            site.append(passkey_signed(journal.state, event, "sup1", key))
        copied_pay = _pay(site, "copied")  # its round's rows are dated at a fixed time
        journal.live_clock = now  # a live append from here, as the daemon's and the CLI's are
        copied = passkey_signed(
            journal.state, HitVerified("verify-copied", now(), copied_pay, "sup1"), "sup1", clone
        )
        assert clone.sign_count == 1
        (receipt,) = journal.append_many([copied])
        assert not receipt.applied
        assert f"{CLONE}:" in receipt.reason
        rows = _journal_rows(path)
        alert_id = f"verify-copied#{CLONE}-{key.credential[:16]}"
        assert rows[-2:] == [
            (receipt.seq, "verify-copied", "hit-verified", "rejected"),
            (receipt.seq + 1, alert_id, "passkey-clone-suspected", "applied"),
        ]
        assert journal.head[0] == receipt.seq + 1
        assert passkeys_of(journal.state)[key.credential].clone_suspected == 1
        # A resend answers with the first refusal and journals nothing more.
        again = journal.append(copied)
        assert again.duplicate
        assert again.seq == receipt.seq
        # The genuine key, counting higher, is held with its copy: refused, no second alert.
        later = HitVerified("verify-later", now(), copied_pay, "sup1")
        refused = journal.append(passkey_signed(journal.state, later, "sup1", key))
        assert not refused.applied
        assert "suspected cloned" in refused.reason
        kinds = [kind for _, _, kind, _ in _journal_rows(path)]
        assert kinds.count("passkey-clone-suspected") == 1
        assert kinds[-1] == "hit-verified"
        assert copied_pay in journal.state.pending
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        (alert,) = [row.event for row in read_rows(raw) if row.values["event_id"] == alert_id]
    assert isinstance(alert, PasskeyCloneSuspected)
    assert alert.credential_id == key.credential
    assert encode_event(copied).decode() == alert.evidence
    status, out, err = run(capsys, "verify", "--db", str(path))
    assert status == 0, (out, err)


def test_a_refusal_not_at_a_live_append_journals_no_alert(tmp_path: Path) -> None:
    """A replay or copy (no controller clock) records what it is given, and no more."""
    path = tmp_path / "pit.db"
    with Journal(path) as journal:
        site, key = _passkey_site(journal)
        clone = key.clone()
        event = HitVerified("verify-0", now(), _pay(site, 0), "sup1")
        site.append(passkey_signed(journal.state, event, "sup1", key))
        copied = HitVerified("verify-copied", now(), _pay(site, "copied"), "sup1")
        receipt = journal.append(passkey_signed(journal.state, copied, "sup1", clone))
        assert f"{CLONE}:" in receipt.reason
        assert journal.head[0] == receipt.seq
        assert passkeys_of(journal.state)[key.credential].clone_suspected is None
