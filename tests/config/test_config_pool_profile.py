"""``[controller] pool_profile``: a jurisdiction profile reaches the ledger only when approved.

Mich. Admin. Code R 432.1838(4) limits when a jackpot may be transferred or eliminated; the
profile holding that rule is named in the configuration, and like every setting that moves
money it takes effect only inside the manager's signed approval of the file (docs/rules.md,
"A pool's life").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from support.config_files import edited, error_of, load

from controller.cli.config_changes import change_lines
from controller.config.approval import configuration_approval
from controller.ledger.apply import LedgerState, apply

if TYPE_CHECKING:
    from pathlib import Path

AT = "2025-01-01T00:00:00.000Z"
PROFILE = 'id = "c1"\npool_profile = "mi"\n'


def test_r432_1838_4_the_profile_is_named_in_the_configuration_and_carried_by_its_approval(
    tmp_path: Path,
) -> None:
    config = load(tmp_path, edited('id = "c1"\n', PROFILE))
    assert config.controller.pool_profile == "MI"
    approval = configuration_approval(config, LedgerState(), AT, "mgr")
    assert approval is not None
    assert approval.jurisdiction == "MI"
    assert "pool_profile: none → MI" in change_lines(approval, LedgerState())
    state, _ = apply(LedgerState(), approval)
    assert state.authority.jurisdiction == "MI"
    assert configuration_approval(config, state, AT, "mgr") is None  # nothing left to approve


def test_r432_1838_4_a_configuration_naming_no_profile_approves_as_it_always_did(
    tmp_path: Path,
) -> None:
    config = load(tmp_path, edited('id = "c1"\n', 'id = "c1"\n'))
    assert config.controller.pool_profile is None
    approval = configuration_approval(config, LedgerState(), AT, "mgr")
    assert approval is not None
    assert approval.jurisdiction is msgspec.UNSET
    assert b"jurisdiction" not in msgspec.json.encode(approval)


def test_r432_1838_4_an_unknown_profile_is_an_error_of_the_file(tmp_path: Path) -> None:
    error = error_of(tmp_path, edited('id = "c1"\n', 'id = "c1"\npool_profile = "Atlantis"\n'))
    assert error.key == "controller.pool_profile"
    assert "is not one of PA, NJ, NY, MI, IN, strict" in error.reason
