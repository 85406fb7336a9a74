"""Start-up's checks before the service builds on a journal: the software, the authority.

:func:`self_check` refuses to run software other than the approved (the manifest in the
journal, docs/operations.md); :func:`configuration_events` is what start-up journals for the
configuration, under the :class:`AuthorityPolicy` of the command that starts it: approved
changes only, once a manager holds a key. Either refuses with a :class:`StartupError` that
names the step to take. :mod:`controller.service.wiring` runs them, then builds the runtime.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.clock import utc_now
from controller.config.approval import (
    Approver,
    approval_steps,
    configuration_approval,
    split,
)
from controller.config.changes import config_events
from controller.errors import ConfigurationError
from controller.events import FaultRecorded
from controller.security.manifest import current

if TYPE_CHECKING:
    from controller.config.load import Config
    from controller.events import AnyEvent
    from controller.ledger_journal import LedgerJournal
    from controller.security.manifest import Manifest

log = logging.getLogger(__name__)


class StartupError(ConfigurationError, RuntimeError):
    """The service cannot start (the configuration does not fit the journal)."""


def self_check(
    config: Config, journal: LedgerJournal, *, require_manifest: bool, seen: Manifest | None
) -> None:
    """Refuse to run software or a configuration other than the approved (docs/operations.md).

    ``seen``: the software as hashed earlier in this process (a standby's), else hashed now.
    """
    approved = journal.state.manifest
    if approved is None and not require_manifest:
        # Only the demo and in-process tests start so; nobody there can approve anything.
        log.info("no approved manifest in the journal (jackpotd run would refuse to start)")
        return
    problems = (
        [f"no approved manifest in {config.controller.journal}"]
        if approved is None
        else (seen or current(config.digest)).differences(approved)
    )
    if problems:
        detail = "; ".join(problems)
        journal.append(
            FaultRecorded(f"fault-{uuid.uuid4()}", utc_now(), "self-check", "manifest", detail)
        )
        steps = approval_steps(config, journal.state, utc_now())
        journal.close()
        raise StartupError(f"start-up self-check failed: {detail} ({steps}; docs/operations.md)")


@dataclass(frozen=True, slots=True)
class AuthorityPolicy:
    """How start-up treats the authority of the journal it opens (docs/security.md).

    ``jackpotd run`` requires signed authority: a manager enrolled with a key, and every
    change the configuration makes to pools and tables approved by a manager's signature.
    The demo brings its own manager (``approver``). In-process tests that build journals of
    their own may run a journal whose authority was never signed, as before signatures.
    """

    require_signed: bool = False
    approver: Approver | None = None


def configuration_events(
    config: Config, journal: LedgerJournal, policy: AuthorityPolicy
) -> list[AnyEvent]:
    """What start-up journals for ``config``: approved changes, and what moves no money."""
    at = utc_now()
    approver = policy.approver
    if approver is not None and not journal.state.authority.signed:
        journal.append(approver.enrollment(at, journal.state))
    signed = journal.state.authority.signed
    if not signed and not policy.require_signed:
        return config_events(config, journal.state, at)  # authority never signed: as before
    if not signed:
        journal.close()
        raise StartupError(
            f"{config.controller.journal}: no operator holds a signing key; enroll a manager "
            "(jackpotd operator add) and approve the configuration (jackpotd config approve)"
        )
    _changes, others = split(config_events(config, journal.state, at))
    approval = configuration_approval(config, journal.state, at, approver.name if approver else "")
    if approval is None:
        return others
    if approver is None:
        journal.close()
        raise StartupError(
            f"{config.source}: the configuration changes {len(approval.changes)} pools or "
            "tables, or its authority settings, and no manager has approved it: "
            f"jackpotd config approve --config {config.source} --key KEY_FILE "
            f"--db {config.controller.journal}"
        )
    return [approver.sign(approval, journal.state), *others]
