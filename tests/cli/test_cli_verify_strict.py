"""``jackpotd verify`` says plainly when it checked no checkpoint signature; ``--strict`` fails.

A chain that verifies and a replay that matches prove the journal consistent, not that the
controller wrote it: anyone who can write the file can rebuild a chain that passes. Only a
checkpoint signature checked under the controller's public key proves that (docs/security.md,
section 2.3; docs/journal.md, "Checkpoints and anchors"). Real journal files, the real
command line.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from support.cli.cli_runs import run
from support.journal.journal_rig import checkpoint

from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from controller.security.controller_key import ControllerKey

NO_KEY = (
    "NOT CHECKED: no checkpoint signature was checked: no controller public key given "
    "(--controller-key FILE or --anchor FILE)"
)


def signed(played: Path, key: ControllerKey, folder: Path) -> Path:
    """The journal checkpointed by ``key``; its public key's file."""
    with Journal(played) as journal:
        checkpoint(journal, key)
    public = folder / "controller.pub"
    public.write_text(key.public_key + "\n", encoding="utf-8")
    return public


def test_verify_without_a_key_says_it_checked_no_signature_and_strict_fails(
    capsys: pytest.CaptureFixture[str], played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    signed(played, key, tmp_path)
    status, out, err = run(capsys, "verify", "--db", str(played))
    assert status == 0
    assert "journal OK" in out
    assert "signatures not checked" in out
    assert NO_KEY in out.splitlines()
    status, out, err = run(capsys, "verify", "--db", str(played), "--strict")
    assert status == 1
    assert NO_KEY in out.splitlines()
    assert "--strict: FAILED" in err


def test_verify_of_a_journal_without_checkpoints_says_so_and_strict_fails(
    capsys: pytest.CaptureFixture[str], played: Path
) -> None:
    status, out, _ = run(capsys, "verify", "--db", str(played))
    assert (status, "checkpoints: none") == (0, out.splitlines()[2])
    assert NO_KEY in out.splitlines()
    status, _, err = run(capsys, "verify", "--db", str(played), "--strict")
    assert status == 1
    assert "--strict: FAILED" in err


def test_strict_verify_passes_when_the_checkpoints_signatures_verify(
    capsys: pytest.CaptureFixture[str], played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    public = signed(played, key, tmp_path)
    status, out, err = run(
        capsys, "verify", "--db", str(played), "--controller-key", str(public), "--strict"
    )
    assert (status, err) == (0, "")
    assert "signatures verified" in out
    assert "NOT CHECKED" not in out


def test_verify_json_counts_the_signatures_checked_and_lists_what_was_not(
    capsys: pytest.CaptureFixture[str], played: Path, key: ControllerKey, tmp_path: Path
) -> None:
    public = signed(played, key, tmp_path)
    status, out, _ = run(capsys, "verify", "--db", str(played), "--json", "--strict")
    document = json.loads(out)
    assert status == 1
    assert (document["ok"], document["signatures_checked"]) == (True, 0)
    assert document["unchecked"] == [NO_KEY.removeprefix("NOT CHECKED: ")]
    status, out, _ = run(
        capsys, "verify", "--db", str(played), "--json", "--controller-key", str(public)
    )
    document = json.loads(out)
    assert (status, document["signatures_checked"], document["unchecked"]) == (0, 1, [])
