"""``jackpotd passkey list`` and ``revoke``: the journal's passkeys, and a manager withdrawing one.

docs/operations.md, "The supervisors' console".

On a signed journal with an identity, sup1's security key is enrolled by the manager; ``list``
shows it live with its relying party and count, ``revoke`` by a prefix of its id signed with
the manager's key file withdraws it (journaled ``passkey-revoked``), after which ``list`` says
revoked and the ledger takes none of its assertions. A prefix that names no passkey, or more
than one, is refused in one line, and a supervisor's key cannot revoke.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.cli.cli_runs import run
from support.journal.journal_rig import pool_opened, table_configured
from support.ledger.approvals import PASSPHRASE, Site, now
from support.web.authenticator import Authenticator, passkey_enrollment

from controller.events import ConfigurationApproved
from controller.ledger.passkeys import passkeys_of
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def pit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, Site[Journal]]:
    """The journal, sup1's enrolled credential id, and the site (its keys)."""
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        site = Site.create(journal)
        table = msgspec.structs.replace(table_configured(), envy_includes_dealer=False)
        approval = ConfigurationApproved(
            f"approval-{uuid.uuid4().hex[:8]}", now(), "digest-1", [pool_opened(), table], "mgr"
        )
        site.append(site.sign(approval, "mgr"))
        enrollment = passkey_enrollment(site.journal.state, "sup1", Authenticator())
        site.append(site.sign(enrollment, "mgr"))
        (credential,) = passkeys_of(site.journal.state)
    return path, credential, site


def test_list_shows_the_enrolled_passkey_and_revoke_withdraws_it(
    pit: tuple[Path, str, Site[Journal]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, credential, site = pit
    status, out, _ = run(capsys, "passkey", "list", "--db", str(path), "--json")
    assert status == 0
    (listed,) = json.loads(out)
    assert (listed["credential_id"], listed["operator"], listed["revoked"]) == (
        credential, "sup1", False,
    )  # fmt: skip
    assert listed["clone_suspected"] is None
    manager = site.key_file("mgr", tmp_path)
    # A credential id is base64url and may begin with "-": after "--" it is never an option.
    status, _, error = run(
        capsys, "passkey", "revoke", "--reason", "tablet lost, ticket 118",
        "--key", str(manager), "--db", str(path), "--", credential[:10],
    )  # fmt: skip
    assert status == 0, error
    assert f"revoking sup1's passkey 'YubiKey 5C' ({credential})" in error
    with Journal(path) as journal:
        assert passkeys_of(journal.state)[credential].revoked
    status, out, _ = run(capsys, "passkey", "list", "--db", str(path))
    assert status == 0
    assert "revoked" in out


def test_a_prefix_that_names_no_passkey_is_refused_in_one_line(
    pit: tuple[Path, str, Site[Journal]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, site = pit
    manager = site.key_file("mgr", tmp_path)
    # A credential id is base64url and may begin with "-": after "--" it is never an option.
    status, _, error = run(
        capsys, "passkey", "revoke", "zzzzzzzz", "--reason", "x", "--key", str(manager),
        "--db", str(path),
    )  # fmt: skip
    assert status != 0
    assert "no passkey enrolled has the id 'zzzzzzzz' (jackpotd passkey list)" in error


def test_a_supervisor_cannot_revoke_a_passkey(
    pit: tuple[Path, str, Site[Journal]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, credential, site = pit
    supervisor = site.key_file("sup2", tmp_path)
    status, _, _ = run(
        capsys, "passkey", "revoke", "--reason", "x", "--key", str(supervisor),
        "--db", str(path), "--", credential,
    )  # fmt: skip
    assert status == 1
    with Journal(path) as journal:
        assert not passkeys_of(journal.state)[credential].revoked


def test_a_credential_id_that_begins_with_a_dash_is_named_with_credential_equals(
    pit: tuple[Path, str, Site[Journal]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """base64url ids begin with "-" one time in 32: ``--credential=ID`` is never an option."""
    path, credential, site = pit
    manager = site.key_file("mgr", tmp_path)
    status, _, error = run(
        capsys, "passkey", "revoke", "--credential=-zzzzzzzzzz", "--reason", "x",
        "--key", str(manager), "--db", str(path),
    )  # fmt: skip
    assert status != 0  # taken as the id it is (no such id), not as an unknown option
    assert "no passkey enrolled has the id '-zzzzzzzzzz'" in error
    status, _, error = run(
        capsys, "passkey", "revoke", f"--credential={credential}", "--reason", "x",
        "--key", str(manager), "--db", str(path),
    )  # fmt: skip
    assert status == 0, error
    with Journal(path) as journal:
        assert passkeys_of(journal.state)[credential].revoked


def test_revoking_names_exactly_one_passkey(
    pit: tuple[Path, str, Site[Journal]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, credential, site = pit
    manager = site.key_file("mgr", tmp_path)
    for named in ([], [credential, f"--credential={credential}"]):
        status, _, error = run(
            capsys, "passkey", "revoke", *named, "--reason", "x", "--key", str(manager),
            "--db", str(path),
        )  # fmt: skip
        assert status != 0
        assert "name one passkey: jackpotd passkey revoke ID, or --credential=ID" in error
    with Journal(path) as journal:
        assert not passkeys_of(journal.state)[credential].revoked
