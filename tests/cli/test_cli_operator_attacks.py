"""Nothing unsigned pulls an operational lever, through ``jackpotd apply`` and the commands.

A real journal with an identity (every journal this version founds): managers Dana Reyes and
Lee Chen and supervisor Sam Okafor, their key files ``dana.key``, ``lee.key``, ``sam.key``
beside it (tests/support/ledger/approvals.py). The attacks of the review, each refused where money
moves, in the ledger: wrong passphrases typed with a key file made under a manager's name, rows
appended with ``jackpotd apply`` to lock every manager out, a manager's own key enrolled under
a second name, one manager enrolling a second operator alone, a manager who revoked the other
enrolling alone, a signed configuration paying Envy on the dealer's hand. And the commands of
docs/operations.md, "Recovering from lockouts" and "Dual control", run as written.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from support.journal.journal_rig import table_configured
from support.ledger.approvals import PASSPHRASE, Site, enrollment, key_file, now

from controller.cli import main
from controller.events import AuthenticationFailed, ConfigurationApproved, encode_event
from controller.ledger_journal.sqlite import Journal
from controller.security import keys

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "operations.md"
DANA, LEE, SAM = "Dana Reyes", "Lee Chen", "Sam Okafor"
FILES = {DANA: "dana.key", LEE: "lee.key", SAM: "sam.key"}
WAIT_S = 120


@dataclass
class Floor:
    """The journal, its folder (the key files) and the operators' keys."""

    folder: Path
    database: Path
    site: Site
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> tuple[int, str, str]:
        """``jackpotd ARGV --db JOURNAL`` in process: the status, standard output and error."""
        status = main([*argv, "--db", str(self.database)])
        captured = self.capsys.readouterr()
        return status, captured.out, captured.err

    def apply(self, *events: object) -> tuple[int, str, str]:
        """``jackpotd apply`` of ``events``, one JSON line each."""
        feed = self.folder / f"feed-{uuid.uuid4().hex[:8]}.jsonl"
        feed.write_bytes(b"\n".join(encode_event(event) for event in events))  # type: ignore[arg-type]
        return self.run("apply", str(feed))

    def forged_failures(self, name: str, count: int) -> tuple[int, str, str]:
        """``count`` failed attempts of ``name`` nobody typed, with their real public key."""
        public_key = keys.public_key_text(self.site.keys[name])
        return self.apply(
            *(
                AuthenticationFailed(
                    f"af-{uuid.uuid4()}", now(), name, "unlock", public_key=public_key
                )
                for _ in range(count)
            )
        )

    def last_reason(self) -> str:
        """Why the journal's last row was refused."""
        with Journal(self.database) as journal:
            return str(list(journal.rows())[-1]["reason"])

    def locked(self) -> set[str]:
        """The operators locked out now."""
        with Journal(self.database) as journal:
            return {name for name, op in journal.state.operators.items() if op.locked}


@pytest.fixture
def attacked_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Floor:
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal, manager=DANA, supervisors=(SAM,))
        site.enroll(LEE, "manager", by=DANA)
        assert journal.state.binding is not None
    for name, file in FILES.items():
        key_file(tmp_path, name, site.keys[name]).rename(tmp_path / file)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    return Floor(tmp_path, database, site, capsys)


def test_wrong_passphrases_with_a_key_file_made_under_a_managers_name_lock_nobody_out(
    attacked_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = attacked_floor.folder / "fake.key"
    monkeypatch.setenv("JACKPOTD_NEW_PASSPHRASE", "an attacker's own passphrase 4471")
    assert main(["operator", "key", LEE, "--out", str(fake)]) == 0
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", "a wrong one, typed on purpose")
    for _ in range(8):
        status, _, err = attacked_floor.run(
            "operator", "unlock", SAM, "--reason", "none", "--key", str(fake)
        )  # fmt: skip
        assert (status, err) == (1, f"jackpotd: {fake}: wrong passphrase for {LEE}\n")
    with Journal(attacked_floor.database) as journal:
        failed = [row for row in journal.rows() if row["kind"] == "authentication-failed"]
        assert len(failed) == 8
        assert all(row["outcome"] == "rejected" for row in failed)
        assert all(f"not {LEE}'s enrolled key" in str(row["reason"]) for row in failed)
        assert journal.state.operators[LEE].failures == 0
    assert attacked_floor.locked() == set()


def test_apply_of_failures_never_locks_out_every_manager(attacked_floor: Floor) -> None:
    for name in (LEE, SAM, DANA):
        status, _, err = attacked_floor.forged_failures(name, 12)
        assert status == 0, err
    assert attacked_floor.locked() == {LEE, SAM}  # Dana is the last manager free to sign: kept free
    status, _, err = attacked_floor.run(
        "operator", "unlock", LEE, "--reason", "rows nobody typed",
        "--key", str(attacked_floor.folder / FILES[DANA]),
    )  # fmt: skip
    assert status == 0, err


def test_the_recovery_of_operations_md_needs_no_locked_signer(attacked_floor: Floor) -> None:
    for name in (LEE, SAM, DANA):
        assert attacked_floor.forged_failures(name, 12)[0] == 0
    assert attacked_floor.locked() == {LEE, SAM}
    section = PAGE.read_text(encoding="utf-8").split("### Recovering from lockouts", 1)[1]
    block = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)[0]
    script = "set -e\n" + block  # the manager's commands, on this journal (no socket here)
    environment = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the tests' jackpotd
        "JACKPOTD_DB": str(attacked_floor.database),
        "JACKPOTD_OPERATOR_SOCKET": str(attacked_floor.folder / "no-daemon.sock"),
        "JACKPOTD_PASSPHRASE": PASSPHRASE,
    }
    done = subprocess.run(  # the page's own commands, as the manager: ourselves
        ["/bin/bash", "-c", script],
        cwd=attacked_floor.folder, env=environment, capture_output=True, text=True, timeout=WAIT_S,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, last = done.stdout.split("operator\trole", 2)[1:]
    assert first.count("LOCKED OUT") == 2
    assert "LOCKED OUT" not in last
    assert attacked_floor.locked() == set()


def test_apply_of_a_managers_own_key_enrolled_under_another_name_is_refused(
    attacked_floor: Floor,
) -> None:
    twice = attacked_floor.site.sign(
        enrollment("Dana Again", "supervisor", attacked_floor.site.keys[DANA], DANA), DANA, LEE
    )
    assert attacked_floor.apply(twice)[1] == "1 events, 1 refused\n"
    assert f"already enrolled ({DANA}): one key, one operator" in attacked_floor.last_reason()


def test_once_two_managers_are_enrolled_operator_add_needs_both_keys(
    attacked_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    sock = keys.generate()
    key_file(attacked_floor.folder, "sock", sock)
    add = ("operator", "add", "sock", "--role", "supervisor", "--public-key", "sock.key")
    monkeypatch.chdir(attacked_floor.folder)
    status, _, err = attacked_floor.run(*add, "--key", FILES[DANA])
    assert status == 1
    assert "enroll needs the signatures of 2 different operators (dual control), not 1" in err
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_1", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_2", PASSPHRASE)
    status, _, err = attacked_floor.run(*add, "--key", FILES[DANA], "--key", FILES[LEE])
    assert status == 0, err


def test_a_manager_who_revoked_the_other_enrolls_again_only_with_a_supervisors_key(
    attacked_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(attacked_floor.folder)
    status, _, err = attacked_floor.run(
        "operator", "revoke", LEE, "--reason", "key lost", "--key", FILES[DANA]
    )  # fmt: skip
    assert status == 0, err  # alone: the revoked manager's key may be the one lost
    key_file(attacked_floor.folder, LEE, keys.generate()).rename(
        attacked_floor.folder / "lee-2026.key"
    )
    again = ("operator", "add", LEE, "--role", "manager", "--public-key", "lee-2026.key")
    status, _, err = attacked_floor.run(*again, "--key", FILES[DANA])
    assert status == 1
    reason = (
        "this journal had two managers and has one left (the other revoked): an enrollment "
        "needs an active supervisor's signature beside the manager's"
    )
    assert reason in err
    assert reason in attacked_floor.last_reason()
    with Journal(attacked_floor.database) as journal:
        assert list(journal.rows())[-1]["outcome"] == "rejected"
        assert LEE not in journal.state.operators
    section = PAGE.read_text(encoding="utf-8").split("### Dual control", 1)[1]
    block = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)[1]
    environment = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the tests' jackpotd
        "JACKPOTD_DB": str(attacked_floor.database),
        "JACKPOTD_OPERATOR_SOCKET": str(attacked_floor.folder / "no-daemon.sock"),
        "JACKPOTD_PASSPHRASE_1": PASSPHRASE,
        "JACKPOTD_PASSPHRASE_2": PASSPHRASE,
    }
    done = subprocess.run(  # the page's command, with the supervisor's key beside Dana's
        ["/bin/bash", "-c", "set -e\n" + block],
        cwd=attacked_floor.folder, env=environment, capture_output=True, text=True, timeout=WAIT_S,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    status, out, _ = attacked_floor.run("operator", "list")
    assert status == 0
    assert re.search(rf"^{LEE}\tmanager", out, re.MULTILINE), out


@pytest.mark.parametrize("envy_includes_dealer", [msgspec.UNSET, True])
def test_apply_of_a_signed_configuration_paying_envy_on_the_dealers_hand_is_refused(
    attacked_floor: Floor, envy_includes_dealer: bool | msgspec.UnsetType
) -> None:
    table = msgspec.structs.replace(table_configured(), pool_id=None, progressive=None)
    table = msgspec.structs.replace(table, envy_includes_dealer=envy_includes_dealer)
    approval = ConfigurationApproved(f"approval-{uuid.uuid4()}", now(), "digest", [table], DANA)
    assert (
        attacked_floor.apply(attacked_floor.site.sign(approval, DANA))[1] == "1 events, 1 refused\n"
    )
    assert (
        "Envy is never paid for the dealer's hand (58 Pa. Code § 688a.1)"
        in attacked_floor.last_reason()
    )
    with Journal(attacked_floor.database) as journal:
        assert journal.state.tables == {}
