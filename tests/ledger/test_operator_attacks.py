"""Nothing unsigned pulls an operational lever: lockouts, one key per operator, Envy (ledger).

Each test is an attack found in review, made through ``Journal.append`` (what ``jackpotd
apply`` and every command reach) on a real journal (in memory: the SQLite journal's code
without a file, docs/journal.md "Backends") with an identity, as every journal
this version founds has (docs/security.md, "Lockouts", "Dual control"): rows that lock the
managers out for good, forged times that stretch or cut a lockout, one manager's key enrolled
twice to satisfy dual control alone, a signed configuration that pays Envy on the dealer's
hand. A journal without an identity (written before identities existed) must still replay
those rows as they were written.
"""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.journal.journal_rig import POOL, pool_opened, table_configured
from support.ledger.approvals import Site, enrollment, now

from controller.clock import utc_iso
from controller.events import (
    AuthenticationFailed,
    ConfigurationApproved,
    MeterAdjusted,
    OperatorEnrolled,
    OperatorRevoked,
    OperatorUnlocked,
)
from controller.ledger.lockouts import LONGEST_LOCKOUT, lockouts_of
from controller.ledger.snapshot import state_digest
from controller.ledger_journal.memory import MemoryJournal
from controller.security import keys
from controller.security.signatures import sign

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.events import AnyEvent, PoolOpened, TableConfigured
    from controller.journal.location import MemoryLocation
    from controller.ports import Receipt

START = datetime.now(UTC)


def at(minutes: float) -> str:
    """The time ``minutes`` after the test started, as events carry it."""
    return utc_iso(START + timedelta(minutes=minutes))


def approval(*changes: PoolOpened | TableConfigured) -> ConfigurationApproved:
    return ConfigurationApproved(
        f"approval-{uuid.uuid4()}", now(), f"digest-{uuid.uuid4().hex[:8]}", [*changes], "mgr",
        dual_control_cents=100_000, lockout_after=3,
    )  # fmt: skip


def without_dealer_envy() -> TableConfigured:
    return msgspec.structs.replace(table_configured(), envy_includes_dealer=False)


@pytest.fixture
def attacked_site(where: MemoryLocation) -> Iterator[Site[MemoryJournal]]:
    """A journal with an identity: managers mgr and mgr2, supervisors sup1 and sup2."""
    with MemoryJournal(where) as journal:
        attacked_site = Site.create(journal)
        attacked_site.append(
            attacked_site.sign(approval(pool_opened(), without_dealer_envy()), "mgr")
        )
        attacked_site.enroll("mgr2", "manager", by="mgr")
        assert attacked_site.journal.state.binding is not None
        yield attacked_site


def failure(
    attacked_site: Site[MemoryJournal], name: str, when: str | None = None, key: str | None = None
) -> Receipt:
    """A wrong passphrase for ``name`` as the command line journals it (their key file's key)."""
    public_key = key if key is not None else keys.public_key_text(attacked_site.keys[name])
    event = AuthenticationFailed(
        f"af-{uuid.uuid4()}", when or now(), name, "adjust", "wrong passphrase",
        public_key=public_key,
    )  # fmt: skip
    return attacked_site.journal.append(event)


def adjust(attacked_site: Site[MemoryJournal], when: str) -> Receipt:
    """A meter adjustment signed by sup1 and sup2, dated ``when``."""
    event = MeterAdjusted(f"adj-{uuid.uuid4()}", when, POOL, "meter", 100, "sup1", "correction")
    return attacked_site.journal.append(attacked_site.sign(event, "sup1", "sup2"))


def unlock(attacked_site: Site[MemoryJournal], name: str, by: str) -> Receipt:
    event = OperatorUnlocked(f"u-{uuid.uuid4()}", now(), name, by, "identity checked in person")
    return attacked_site.journal.append(attacked_site.sign(event, by))


def locked(attacked_site: Site[MemoryJournal], name: str) -> bool:
    return attacked_site.journal.state.operators[name].locked


# Lockout as a weapon.


def test_failures_with_a_key_file_made_under_a_managers_name_lock_nobody_out(
    attacked_site: Site[MemoryJournal],
) -> None:
    made_up = keys.public_key_text(keys.generate())
    for _ in range(10):
        receipt = failure(attacked_site, "mgr2", key=made_up)
        assert not receipt.applied
        assert "not mgr2's enrolled key" in receipt.reason
    assert (
        attacked_site.journal.state.operators["mgr2"].failures,
        locked(attacked_site, "mgr2"),
    ) == (0, False)


def test_a_failure_without_the_key_files_public_key_counts_nothing(
    attacked_site: Site[MemoryJournal],
) -> None:
    for _ in range(10):
        bare = AuthenticationFailed(f"af-{uuid.uuid4()}", now(), "mgr2", "approve-config")
        receipt = attacked_site.journal.append(bare)
        assert not receipt.applied
        assert "counts nothing" in receipt.reason
    assert (
        attacked_site.journal.state.operators["mgr2"].failures,
        locked(attacked_site, "mgr2"),
    ) == (0, False)


def test_appended_failures_never_lock_out_the_last_manager_free_to_sign(
    attacked_site: Site[MemoryJournal],
) -> None:
    for _ in range(3):
        failure(attacked_site, "mgr2")
    assert locked(attacked_site, "mgr2")
    for _ in range(20):
        receipt = failure(attacked_site, "mgr")
        assert receipt.applied
        assert not getattr(receipt.effects[0], "locked", True)
    assert not locked(attacked_site, "mgr")
    # The manager the floor kept lifts the others' lockouts, and signs as ever.
    assert unlock(attacked_site, "mgr2", by="mgr").applied
    assert not locked(attacked_site, "mgr2")
    assert attacked_site.journal.append(attacked_site.sign(approval(), "mgr")).applied


def test_a_lockout_lasts_five_minutes_of_event_time_and_the_next_twice_as_long(
    attacked_site: Site[MemoryJournal],
) -> None:
    for _ in range(3):
        failure(attacked_site, "sup1", at(0))
    assert "locked out after failed authentications until" in adjust(attacked_site, at(4.9)).reason
    for _ in range(3):  # guesses during the lockout count nothing: it is not stretched
        failure(attacked_site, "sup1", at(4))
    assert lockouts_of(attacked_site.journal.state, "sup1").windows == ((at(0), at(5)),)
    for _ in range(3):  # guessing again once it ended: locked out twice as long
        failure(attacked_site, "sup1", at(6))
    assert not adjust(attacked_site, at(15.9)).applied
    assert adjust(attacked_site, at(16)).applied  # over; a signed action ends the back-off
    assert (
        lockouts_of(attacked_site.journal.state, "sup1").count,
        locked(attacked_site, "sup1"),
    ) == (0, False)
    for _ in range(3):
        failure(attacked_site, "sup1", at(17))
    assert lockouts_of(attacked_site.journal.state, "sup1").windows == ((at(17), at(22)),)


def test_the_back_off_stops_at_its_cap(attacked_site: Site[MemoryJournal]) -> None:
    lengths = []
    start = 0.0
    for _ in range(7):
        for _ in range(3):
            failure(attacked_site, "sup1", at(start))
        begun, ended = lockouts_of(attacked_site.journal.state, "sup1").windows[-1]
        length = datetime.fromisoformat(ended) - datetime.fromisoformat(begun)
        lengths.append(length.total_seconds() / 60)
        start += length.total_seconds() / 60
    assert lengths == [5, 10, 20, 40, 60, 60, 60]
    assert lengths[-1] * 60 == LONGEST_LOCKOUT.total_seconds()


def test_failures_dated_in_the_future_or_the_past_cannot_lock_an_operator_out_now(
    attacked_site: Site[MemoryJournal],
) -> None:
    for minutes in (60 * 24 * 365, -60 * 24):
        for _ in range(3):
            assert failure(attacked_site, "sup1", at(minutes)).applied
    assert locked(attacked_site, "sup1")  # two lockouts stand: a year ahead, a day ago
    assert adjust(attacked_site, at(1)).applied  # neither binds now; the signature ends them
    assert not locked(attacked_site, "sup1")


def test_forged_times_cannot_shorten_a_standing_lockout(attacked_site: Site[MemoryJournal]) -> None:
    for _ in range(3):
        failure(attacked_site, "sup1", at(0))
    # Someone who wants sup1 free now writes failures after and before the lockout.
    for minutes in (6, 60 * 24, -60):
        for _ in range(3):
            failure(attacked_site, "sup1", at(minutes))
    assert "until" in adjust(attacked_site, at(2)).reason
    assert at(0) in {start for start, _ in lockouts_of(attacked_site.journal.state, "sup1").windows}


def test_a_locked_manager_cannot_sign_the_unlock_of_herself(
    attacked_site: Site[MemoryJournal],
) -> None:
    for _ in range(3):
        failure(attacked_site, "mgr2")
    receipt = unlock(attacked_site, "mgr2", by="mgr2")
    assert "mgr2 is locked out" in receipt.reason


# Dual control with one key.


def test_a_manager_cannot_enroll_her_own_key_again_under_another_name(
    attacked_site: Site[MemoryJournal],
) -> None:
    twice = enrollment("Mgr Again", "supervisor", attacked_site.keys["mgr"], "mgr")
    receipt = attacked_site.journal.append(attacked_site.sign(twice, "mgr", "mgr2"))
    assert "already enrolled (mgr): one key, one operator" in receipt.reason
    assert "Mgr Again" not in attacked_site.journal.state.operators


def test_the_same_key_in_another_base64_spelling_is_refused(
    attacked_site: Site[MemoryJournal],
) -> None:
    text = keys.public_key_text(attacked_site.keys["mgr"])
    raw = base64.b64decode(text)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(text[-2])
    other = text[:-2] + alphabet[last ^ 1] + text[-1]  # the unused low bits differ
    assert other != text
    assert base64.b64decode(other) == raw
    twice = msgspec.structs.replace(
        enrollment("Mgr Again", "supervisor", attacked_site.keys["mgr"], "mgr"), public_key=other
    )
    receipt = attacked_site.journal.append(attacked_site.sign(twice, "mgr", "mgr2"))
    assert "not the base64 of a 32-byte Ed25519 public key" in receipt.reason


def test_a_revoked_operators_key_is_never_enrolled_again(
    attacked_site: Site[MemoryJournal],
) -> None:
    revoked = OperatorRevoked(f"r-{uuid.uuid4()}", now(), "sup2", "mgr", "left the company")
    attacked_site.append(attacked_site.sign(revoked, "mgr"))
    again = enrollment("sup2-again", "supervisor", attacked_site.keys["sup2"], "mgr")
    receipt = attacked_site.journal.append(attacked_site.sign(again, "mgr", "mgr2"))
    assert "already enrolled (a revoked operator)" in receipt.reason


def test_once_two_managers_are_enrolled_an_enrollment_needs_both(
    attacked_site: Site[MemoryJournal],
) -> None:
    attacked_site.keys["sock"] = keys.generate()

    def puppet() -> OperatorEnrolled:  # a new id each time: a refused one is spent
        return enrollment("sock", "supervisor", attacked_site.keys["sock"], "mgr")

    receipt = attacked_site.journal.append(attacked_site.sign(puppet(), "mgr"))
    assert "enroll needs the signatures of 2 different operators (dual control), not 1" in (
        receipt.reason
    )
    with_a_supervisor = attacked_site.journal.append(attacked_site.sign(puppet(), "mgr", "sup1"))
    assert "sup1 (supervisor) may not enroll" in with_a_supervisor.reason
    assert attacked_site.journal.append(attacked_site.sign(puppet(), "mgr", "mgr2")).applied


# Dual control after a revocation.

ALONE = "an enrollment needs an active supervisor's signature beside the manager's"


def revoke(attacked_site: Site[MemoryJournal], name: str, by: str) -> Receipt:
    event = OperatorRevoked(f"r-{uuid.uuid4()}", now(), name, by, "key lost")
    return attacked_site.append(attacked_site.sign(event, by))


def test_a_manager_who_revokes_the_only_other_manager_cannot_then_enroll_alone(
    attacked_site: Site[MemoryJournal],
) -> None:
    revoke(attacked_site, "mgr2", by="mgr")  # alone: the revoked manager's key may be the one lost
    assert attacked_site.journal.state.authority.one_manager_left is True
    for role in ("manager", "supervisor"):
        attacked_site.keys[f"sock-{role}"] = keys.generate()
        puppet = enrollment(f"sock-{role}", role, attacked_site.keys[f"sock-{role}"], "mgr")
        receipt = attacked_site.journal.append(attacked_site.sign(puppet, "mgr"))
        assert not receipt.applied
        assert "had two managers and has one left (the other revoked)" in receipt.reason
        assert ALONE in receipt.reason
        assert f"sock-{role}" not in attacked_site.journal.state.operators
    faults = [row for row in attacked_site.journal.rows() if row["kind"] == "operator-enrolled"][
        -2:
    ]
    assert [row["outcome"] for row in faults] == ["rejected", "rejected"]
    assert all(ALONE in str(row["reason"]) for row in faults)


def test_with_a_supervisors_second_signature_the_lone_manager_enrolls_a_second_manager(
    attacked_site: Site[MemoryJournal],
) -> None:
    revoke(attacked_site, "mgr2", by="mgr")
    attacked_site.keys["mgr3"] = keys.generate()
    second = enrollment("mgr3", "manager", attacked_site.keys["mgr3"], "mgr")
    attacked_site.append(attacked_site.sign(second, "mgr", "sup1"))
    assert attacked_site.journal.state.operators["mgr3"].role == "manager"
    # Two managers again: the rule of two managers holds, and the memory is gone.
    assert attacked_site.journal.state.authority.one_manager_left is msgspec.UNSET
    attacked_site.keys["sup3"] = keys.generate()
    supervisor = enrollment("sup3", "supervisor", attacked_site.keys["sup3"], "mgr")
    refused = attacked_site.journal.append(attacked_site.sign(supervisor, "mgr", "sup1"))
    assert "sup1 (supervisor) may not enroll" in refused.reason
    supervisor = enrollment("sup3", "supervisor", attacked_site.keys["sup3"], "mgr")
    assert attacked_site.journal.append(attacked_site.sign(supervisor, "mgr", "mgr3")).applied


def test_the_supervisors_second_signature_must_be_a_free_supervisors_beside_the_manager(
    attacked_site: Site[MemoryJournal],
) -> None:
    revoke(attacked_site, "mgr2", by="mgr")
    attacked_site.keys["new"] = keys.generate()

    def newcomer() -> OperatorEnrolled:
        return enrollment("new", "supervisor", attacked_site.keys["new"], "mgr")

    two_supervisors = attacked_site.journal.append(
        attacked_site.sign(msgspec.structs.replace(newcomer(), by="sup1"), "sup1", "sup2")
    )
    assert "a manager signs an enrollment" in two_supervisors.reason
    for _ in range(3):
        failure(attacked_site, "sup1")
    assert locked(attacked_site, "sup1")
    locked_out = attacked_site.journal.append(attacked_site.sign(newcomer(), "mgr", "sup1"))
    assert "sup1 is locked out after failed authentications until" in locked_out.reason
    assert "new" not in attacked_site.journal.state.operators
    assert attacked_site.journal.append(attacked_site.sign(newcomer(), "mgr", "sup2")).applied


def test_the_memory_of_two_managers_is_replayed_from_the_rows_as_written(
    attacked_site: Site[MemoryJournal], where: MemoryLocation
) -> None:
    assert (
        "one_manager_left"
        not in msgspec.json.encode(attacked_site.journal.state.authority).decode()
    )
    revoke(attacked_site, "mgr2", by="mgr")
    attacked_site.keys["sock"] = keys.generate()
    puppet = enrollment("sock", "supervisor", attacked_site.keys["sock"], "mgr")
    assert ALONE in attacked_site.journal.append(attacked_site.sign(puppet, "mgr")).reason
    written = state_digest(attacked_site.journal.state)
    report = attacked_site.journal.verify()  # the rows replayed from the first give the same state
    assert report.ok, report.problems
    with MemoryJournal(where) as reopened:
        assert reopened.state.authority.one_manager_left is True
        assert state_digest(reopened.state) == written


# Envy on the dealer's hand, through the back door.


@pytest.mark.parametrize("envy_includes_dealer", [msgspec.UNSET, True])
def test_a_signed_configuration_cannot_pay_envy_on_the_dealers_hand(
    attacked_site: Site[MemoryJournal], envy_includes_dealer: bool | msgspec.UnsetType
) -> None:
    table = msgspec.structs.replace(
        table_configured("table-2", "T2"), envy_includes_dealer=envy_includes_dealer
    )
    receipt = attacked_site.journal.append(attacked_site.sign(approval(table), "mgr"))
    assert not receipt.applied
    assert "Envy is never paid for the dealer's hand (58 Pa. Code § 688a.1)" in receipt.reason
    assert "T2" not in attacked_site.journal.state.tables


# Old journals replay as they were written.


def test_a_journal_without_an_identity_keeps_the_rules_it_was_written_under(
    where: MemoryLocation,
) -> None:
    manager, supervisor = keys.generate(), keys.generate()

    def signed(event: AnyEvent, name: str, key: Ed25519PrivateKey) -> AnyEvent:
        return msgspec.structs.replace(event, signatures=[sign(event, name, key)])  # unbound

    events: list[AnyEvent] = [
        signed(enrollment("mgr", "manager", manager, "mgr"), "mgr", manager),
        signed(enrollment("sup", "supervisor", supervisor, "mgr"), "mgr", manager),
        signed(enrollment("sup-again", "supervisor", supervisor, "mgr"), "mgr", manager),
        *(AuthenticationFailed(f"af-{n}", now(), "sup", "adjust") for n in range(5)),
        signed(
            ConfigurationApproved(
                "ok", now(), "digest", [pool_opened(), table_configured()], "mgr"
            ),
            "mgr",
            manager,
        ),
    ]
    with MemoryJournal(where) as journal:
        receipts = [journal.append(event) for event in events]
        assert all(receipt.applied for receipt in receipts), [r.reason for r in receipts]
        assert journal.state.binding is None
        assert journal.state.operators["sup"].locked  # until a manager unlocks, as written
        assert journal.state.tables["T1"].envy_includes_dealer  # as it was played
        written = state_digest(journal.state)
    with MemoryJournal(where) as reopened:
        assert state_digest(reopened.state) == written
