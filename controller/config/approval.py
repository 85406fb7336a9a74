"""A manager's approval of a configuration: the changes that move money, in one signed bundle.

The configuration file says which pools exist, their terms, each table's rules and limits,
and the wide-area links (docs/wide-area.md): all of it moves money. So none of it takes effect
because a file says so (docs/security.md): :func:`config_events` finds what the file would
change in the ledger, and :func:`configuration_approval` wraps the changes that move money
(pools opened, terms changed, tables configured, a property joined to central, a property
linked at central) with the file's digest and the authority settings (dual control, lockout)
into a :class:`~controller.events.ConfigurationApproved`, which a manager signs
(``jackpotd config approve``). The ledger applies the bundle all or none, and refuses the same
changes on their own once authority is signed. What moves no money (closing a table the file no
longer names) is journaled as it is.

The bundle's id is the file's digest, the ledger's configuration revision and a random part.
Approving a file the ledger already runs finds nothing to approve; and an approval refused
(signed by a supervisor, forged, fed through ``jackpotd apply``) never holds the id of the
manager's approval that comes next, as a predictable id would (a refused event's id is spent:
the journal would take the manager's approval for a conflicting copy of it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import msgspec

from controller.config.changes import config_events
from controller.events import (
    ConfigurationApproved,
    OperatorEnrolled,
    PoolOpened,
    PoolTermsChanged,
    TableConfigured,
)
from controller.ledger.binding import signed_by
from controller.security.keys import public_key_text
from controller.wide_events import SiteLinked, WideAreaJoined

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.config.load import Config
    from controller.events import AnyEvent
    from controller.ledger.apply import LedgerState

E = TypeVar("E", bound="AnyEvent")

Change = PoolOpened | PoolTermsChanged | TableConfigured | SiteLinked | WideAreaJoined


def split(events: list[AnyEvent]) -> tuple[list[Change], list[AnyEvent]]:
    """The changes that need an approval, and the rest, each in their order."""
    changes: list[Change] = []
    others: list[AnyEvent] = []
    for event in events:
        if isinstance(event, Change):
            changes.append(event)
        else:
            others.append(event)
    return changes, others


def configuration_approval(
    config: Config, state: LedgerState, at: str, by: str
) -> ConfigurationApproved | None:
    """The approval a manager must sign for ``config`` to run on ``state``; None if none is.

    None when the ledger already runs what the file says: no money change, the same authority
    settings, and a configuration approved before.
    """
    changes, _ = split(config_events(config, state, at))
    settings = config.controller
    authority = state.authority
    profile = msgspec.UNSET if settings.pool_profile is None else settings.pool_profile
    unchanged = (
        authority.dual_control_cents == settings.dual_control_cents
        and authority.lockout_after == settings.lockout_after
        and (profile is msgspec.UNSET or authority.jurisdiction == profile)
    )
    if not changes and unchanged and authority.configuration is not None:
        return None
    return ConfigurationApproved(
        f"configuration/{config.digest[:16]}/{state.revision}/{uuid.uuid4().hex[:12]}",
        at,
        configuration=config.digest,
        changes=changes,
        by=by,
        dual_control_cents=settings.dual_control_cents,
        lockout_after=settings.lockout_after,
        jurisdiction=profile,
    )


def approval_steps(config: Config, state: LedgerState, at: str) -> str:
    """What a manager runs for the service to start on ``config`` again, in its order.

    After a change of the file both its changes and the software manifest (which covers the
    file's digest) need a manager: the configuration first, then what is installed, each by
    its own command (docs/operations.md, "After a change of the configuration"). A file whose
    change moves no money (a port, a log setting) needs only the manifest.
    """
    where = f"--config {config.source} --db {config.controller.journal} --key KEY_FILE"
    manifest = f"jackpotd manifest approve {where}"
    if state.authority.signed and configuration_approval(config, state, at, "") is not None:
        return (
            "a manager approves the configuration, then what is installed: "
            f"jackpotd config approve {where}, then {manifest}"
        )
    return f"a manager approves what is installed with {manifest}"


@dataclass(frozen=True, slots=True)
class Approver:
    """A manager whose key is at hand to approve a configuration by itself: only the demo's.

    In production nothing signs by itself: a manager runs ``jackpotd config approve`` with
    their key file. The demo, which plays with money nobody owns, keeps a manager's key next
    to its journal and approves its own embedded configuration at each start.
    """

    name: str
    key: Ed25519PrivateKey

    def sign(self, event: E, state: LedgerState) -> E:
        """``event`` with this manager's signature, bound for ``state``."""
        return signed_by(state, event, [(self.name, self.key)])

    def enrollment(self, at: str, state: LedgerState) -> OperatorEnrolled:
        """This manager's self-signed enrollment, for a journal with no keyed operator yet."""
        enrolled = OperatorEnrolled(
            f"operator/{self.name}/{public_key_text(self.key)[:16]}", at, self.name, "manager",
            "", "", "ed25519", self.name, public_key=public_key_text(self.key),
        )  # fmt: skip
        return self.sign(enrolled, state)
