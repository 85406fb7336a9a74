"""``jackpotd identify-journal``: a journal founded before identities existed is given one.

docs/security.md, "Bound signatures". A real signed journal whose operators signed as before
identities existed (unbound signatures, as such a journal holds them): it replays as it was
written, a manager names it at the command line with their key file, and from then on an
unbound signature is refused there and a bound one applies; the same signed event copied into
another such journal, where the same manager is enrolled but the meters differ, is refused.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.journal.journal_rig import POOL, opened_journal, wager
from support.ledger.approvals import PASSPHRASE, Site, enrollment, key_file, now

from controller.events import JournalIdentified, MeterAdjusted
from controller.ledger_journal.sqlite import Journal
from controller.security import keys
from controller.security.signatures import sign, with_signature

if TYPE_CHECKING:
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.events import AnyEvent

OPERATORS = (("mgr", "manager"), ("sup1", "supervisor"), ("sup2", "supervisor"))


def unbound(event: AnyEvent, *signers: tuple[str, Ed25519PrivateKey]) -> AnyEvent:
    """``event`` signed as before signatures were bound (the event alone)."""
    for name, key in signers:
        event = with_signature(event, sign(event, name, key))
    return event


def founded_before_identities(path: Path, people: dict[str, Ed25519PrivateKey]) -> None:
    """A signed journal as earlier versions founded it: keyed operators, unbound signatures."""
    with opened_journal(path) as journal:
        for name, role in OPERATORS:
            event = enrollment(name, role, people[name], "mgr")
            assert journal.append(unbound(event, ("mgr", people["mgr"]))).applied
        assert journal.state.authority.signed
        assert journal.state.binding is None


def adjustment(cents: int = 500) -> MeterAdjusted:
    return MeterAdjusted(f"adjust-{uuid.uuid4()}", now(), POOL, "meter", cents, "sup1", "count")


@pytest.fixture
def people() -> dict[str, Ed25519PrivateKey]:
    return {name: keys.generate() for name, _role in OPERATORS}


def test_a_manager_names_an_old_journal_and_only_bound_signatures_hold_there_after(
    tmp_path: Path,
    people: dict[str, Ed25519PrivateKey],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "journal.db"
    founded_before_identities(path, people)
    with Journal(path) as journal:  # as it was written: unbound signatures hold
        old = unbound(adjustment(), ("sup1", people["sup1"]), ("sup2", people["sup2"]))
        assert journal.append(old).applied
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    status, out, err = run(
        capsys, "identify-journal", "--db", str(path), "--reason", "upgrade, change 4410",
        "--key", str(key_file(tmp_path, "mgr", people["mgr"])),
    )  # fmt: skip
    assert (status, err) == (0, ""), err
    assert out.startswith("identity journal-")
    with Journal(path) as journal:
        assert journal.state.binding is not None
        again = unbound(adjustment(), ("sup1", people["sup1"]), ("sup2", people["sup2"]))
        assert "not bound to this journal" in journal.append(again).reason
        site = Site(journal, dict(people))
        assert journal.append(site.sign(adjustment(), "sup1", "sup2")).applied
    status, _out, err = run(
        capsys, "identify-journal", "--db", str(path), "--reason", "again",
        "--key", str(tmp_path / "mgr.key"),
    )  # fmt: skip
    assert status == 1
    assert "has an identity already" in err


def test_an_identification_copied_into_another_old_journal_is_refused(
    tmp_path: Path, people: dict[str, Ed25519PrivateKey]
) -> None:
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    for path in (first, second):
        founded_before_identities(path, people)
    with Journal(second) as journal:  # the other pit played a round: other meters
        played = unbound(wager("w-1", "r-1", 1), ("sup1", people["sup1"]))
        assert journal.append(played).applied
    with Journal(first) as journal:
        site = Site(journal, dict(people))
        event = JournalIdentified("identify-a", now(), "journal-" + "a" * 32, "mgr", "upgrade")
        identified = site.sign(event, "mgr")
        assert journal.append(identified).applied
    with Journal(second) as journal:
        reason = journal.append(identified).reason
        assert "the state changed since" in reason
        assert journal.state.binding is None
