"""The console's drafts: the exact event a passkey is asked to sign, and the signatures it collects.

The server drafts each action as the CLI drafts it (controller/cli/supervisor.py and
controller/cli/operators.py: the same event, an id of the same form, the controller's time)
and binds it with the ledger's own :func:`controller.ledger.binding.binding_for` against the
state the operator socket gave. What the page is handed is the **bound bytes**
(:func:`controller.security.signatures.signed_bytes`): the page shows the event's fields read
from those bytes and asks the authenticator for an assertion over their SHA-256, the very
challenge the ledger recomputes (controller/security/webauthn_signatures.py). An enrollment
first asks for a registration over the enrollment's digest without it, then for the managers'
signatures over the whole.

A draft holds no secret: it is the unsigned event, its binding, and the assertions relayed so
far. When it has the signatures the ledger will ask for (two at or above the dual-control
amount, always two for a meter correction, the managers an enrollment needs), the console
submits it; the ledger judges every one of them. A draft lives until its binding's window
closes, and at most :data:`MAX_DRAFTS` are kept.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import msgspec

from controller.errors import InputError
from controller.event_base import Signature, WebAuthnAssertion
from controller.events import (
    HitVerified,
    MeterAdjusted,
    OperatorUnlocked,
    PasskeyEnrolled,
    PasskeyRegistration,
    PasskeyRevoked,
    RoundVoided,
)
from controller.fault_events import FaultsAcknowledged
from controller.ledger.binding import binding_for
from controller.ledger.operator_events import enrolling_managers
from controller.ledger.passkeys import passkeys_of
from controller.ledger.table_state import Phase
from controller.security.signatures import signed_bytes
from controller.web.console_words import no_fault_waiting, not_held

if TYPE_CHECKING:
    from controller.event_base import Binding
    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState

MAX_DRAFTS: Final = 64
"""Drafts kept at once: the oldest is dropped past this (each lives minutes at most)."""
DUAL: Final = 2


class DraftError(InputError, ValueError):
    """A draft that cannot be made or signed; the message is said to the supervisor.

    Bad input from a client of the console, one of the package's errors (controller/errors.py).
    """


@dataclass(slots=True)
class Draft:
    """One action being signed: the event, its binding, and who has signed it so far."""

    draft_id: str
    command: str
    """The console's command for the provenance (``console verify-hit``): two words, as the
    operator socket takes a command's name (controller/runtime/operator_desk.py)."""
    event: AnyEvent
    binding: Binding
    needed: int
    registering: bool = False
    """An enrollment waiting for the authenticator's registration, not yet for signatures."""
    signatures: list[Signature] = field(default_factory=list)

    @property
    def bound(self) -> bytes:
        """What is signed now: the bound bytes, or the enrollment's without its registration."""
        event = self.event
        if self.registering and isinstance(event, PasskeyEnrolled):
            event = msgspec.structs.replace(event, registration=msgspec.UNSET)
        return signed_bytes(event, self.binding)

    @property
    def signed(self) -> list[str]:
        """Who has signed, in order."""
        return [signature.operator for signature in self.signatures]

    def signed_event(self) -> AnyEvent:
        """The event with every signature relayed so far."""
        return msgspec.structs.replace(self.event, signatures=list(self.signatures))

    def expired(self, now: datetime) -> bool:
        """Whether the binding's window has closed."""
        return datetime.fromisoformat(self.binding.not_after) < now


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


def needed_signatures(state: LedgerState, event: AnyEvent) -> int:
    """The signatures the ledger will ask of ``event`` (it checks again; this is when to send)."""
    match event:
        case HitVerified():
            dual = state.authority.dual_control_cents
            payout = state.pending.get(event.payout_id)
            if payout is not None and dual is not None and payout.win_cents >= dual:
                return DUAL
            return 1
        case MeterAdjusted():
            return DUAL
        case PasskeyEnrolled():
            return enrolling_managers(state)
        case _:
            return 1


def drafted(  # noqa: PLR0913 - one per field an action may carry
    state: LedgerState,
    at: str,
    action: str,
    by: str,
    *,
    payout_id: str = "",
    table_id: str = "",
    round_id: str = "",
    pool_id: str = "",
    account: str = "",
    amount_cents: int = 0,
    name: str = "",
    reason: str = "",
    through: str = "",
    count: int = 0,
) -> Draft:
    """The draft of one of the console's actions, as the CLI's command drafts it."""
    event: AnyEvent
    match action:
        case "verify-hit":
            event = HitVerified(_new_id("verify"), at, payout_id, by)
        case "void":
            _require_held(state, table_id, round_id)
            event = RoundVoided(
                _new_id("void"), at, table_id, round_id, by, reason, refund_contributions=True
            )
        case "adjust":
            event = MeterAdjusted(_new_id("adjust"), at, pool_id, account, amount_cents, by, reason)
        case "operator unlock":
            event = OperatorUnlocked(_new_id("unlock"), at, name, by, reason)
        case "passkey revoke":
            event = PasskeyRevoked(_new_id("passkey-revoke"), at, name, by, reason)
        case "faults ack":
            if not through or count < 1:
                raise DraftError(no_fault_waiting())
            event = FaultsAcknowledged(_new_id("faults-ack"), at, through, count, reason, by)
        case _:
            raise DraftError(f"the console does not take {action!r}")
    return _draft(state, event, f"console {action.replace(' ', '-')}")


def _require_held(state: LedgerState, table_id: str, round_id: str) -> None:
    """Refuse the void of a round the ledger does not hold for a supervisor, in plain words.

    The console voids only those: the dealer voids a misdeal at the table, and a supervisor
    any open round with ``jackpotd void`` (controller/ledger/voids.py).
    """
    live = state.table_states.get(table_id)
    if live is not None and live.round_id == round_id and live.phase is Phase.HELD:
        return
    is_open = (live is not None and live.round_id == round_id) or (
        (table_id, round_id) in state.rounds
    )
    raise DraftError(not_held(table_id, round_id, is_open=is_open))


def enrollment_draft(  # noqa: PLR0913 - the enrollment's fields
    state: LedgerState, at: str, *, operator: str, label: str, by: str, rp_id: str, origin: str
) -> Draft:
    """A passkey's enrollment for ``operator``, waiting for the authenticator's registration."""
    event = PasskeyEnrolled(_new_id("passkey"), at, operator, label, rp_id, [origin], by)
    draft = _draft(state, event, "console passkey-enroll")
    draft.registering = True
    return draft


def _draft(state: LedgerState, event: AnyEvent, command: str) -> Draft:
    binding = binding_for(state, event)
    if binding is None:
        raise DraftError(
            "this journal has no identity: its operators' signatures are not bound, and a "
            "passkey signs only bound actions"
        )
    return Draft(_new_id("draft"), command, event, binding, needed_signatures(state, event))


def registered(draft: Draft, registration: PasskeyRegistration) -> None:
    """The enrollment with the authenticator's registration: the managers sign it next."""
    if not draft.registering or not isinstance(draft.event, PasskeyEnrolled):
        raise DraftError("this draft is not waiting for a passkey's registration")
    draft.event = msgspec.structs.replace(draft.event, registration=registration)
    draft.registering = False


def add_assertion(
    state: LedgerState,
    draft: Draft,
    assertion: WebAuthnAssertion,
    signature: str,
) -> str:
    """Hold one passkey's assertion on ``draft``; the name of the operator whose passkey it is.

    The signer is whoever the ledger enrolled the credential for (the ledger checks the rest);
    an operator signs a draft once, and the first to sign is the one the event names.
    """
    if draft.registering:
        raise DraftError("this enrollment waits for the passkey's registration first")
    passkey = passkeys_of(state).get(assertion.credential_id)
    if passkey is None:
        raise DraftError("this passkey is not enrolled here: a manager enrolls it first")
    who = passkey.operator
    if who in draft.signed:
        raise DraftError(f"{who} has signed this already: another operator signs next")
    if not draft.signatures and getattr(draft.event, "by", who) != who:
        raise DraftError(f"this action is {getattr(draft.event, 'by', '')}'s to sign first")
    draft.signatures.append(Signature(who, signature, draft.binding, assertion))
    return who


class Drafts:
    """The drafts being signed, by id; expired ones dropped, at most :data:`MAX_DRAFTS`."""

    def __init__(self) -> None:
        self._drafts: dict[str, Draft] = {}

    def keep(self, draft: Draft) -> Draft:
        """Keep ``draft`` (dropping expired ones and the oldest past the cap)."""
        self.sweep()
        while len(self._drafts) >= MAX_DRAFTS:
            del self._drafts[next(iter(self._drafts))]
        self._drafts[draft.draft_id] = draft
        return draft

    def get(self, draft_id: str) -> Draft:
        """The live draft ``draft_id``, or a refusal saying it is gone."""
        self.sweep()
        draft = self._drafts.get(draft_id)
        if draft is None:
            raise DraftError("this action's signing time is over, or it was done: start again")
        return draft

    def drop(self, draft_id: str) -> None:
        """Forget a draft (submitted)."""
        self._drafts.pop(draft_id, None)

    def sweep(self) -> None:
        """Drop every draft whose window has closed."""
        now = datetime.now(UTC)
        for draft_id in [key for key, draft in self._drafts.items() if draft.expired(now)]:
            del self._drafts[draft_id]
