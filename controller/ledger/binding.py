"""Bound signatures: an operator's action is valid in one journal, against one state, once.

A signature over the event alone would be valid wherever its bytes are copied: into the journal
of another controller where the same people are enrolled, back into this journal after its rows
were archived, or onto a later state the signers never saw (docs/security.md, "Bound
signatures"). So each signature carries a :class:`~controller.event_base.Binding` it signs with
the event, and the ledger, which alone decides, checks every part of it:

* **The journal.** The journal's identity is made once, by the manager whose self-signed
  enrollment makes its authority signed (the first enrollment with a key names it in its
  binding); from then on every signature must name it. Another journal's action is refused.
* **The target.** :func:`target_of` names, from the state the event is applied to, what the
  action acts on: the pending payout and its amount, the pool's revision and its adjustments,
  the round, the operator and their key, the approved configuration or software it replaces,
  the halt of a wide-area link. A signature made against another state (a resumption signed
  for an earlier halt, an adjustment signed before another was made) is stale, and refused.
* **The time.** The event's time must lie in the signature's window, and the window may be
  no longer than :data:`MAX_WINDOW`: a signature is valid for the moment its event names and a
  little after, never open-ended. The ledger is pure and has no clock of its own; together with
  the target and the once-ever rule, this keeps a signature from being kept and used later on
  another state.
* **Once, ever.** The id of every signed event applied is kept in the state for good, across
  checkpoints, archives and copies to another backend (it is part of the state's snapshot): a
  second application of the same signed event is refused even when the first one's row is no
  longer in the live journal.

A journal written before identities existed has none (:attr:`LedgerState.binding` is None): its
unbound signatures are checked as they were, so that it replays exactly as it was written, and
its snapshots (and the checkpoints that sign their digests) are unchanged.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final, TypeVar

import msgspec

from controller.agent_events import TableAgentEnrolled, TableAgentRevoked
from controller.clock import utc_iso
from controller.event_base import Binding
from controller.events import (
    ConfigurationApproved,
    FaultsAcknowledged,
    HistoryRestored,
    HitVerified,
    JournalIdentified,
    ManifestApproved,
    MeterAdjusted,
    OperatorEnrolled,
    OperatorRevoked,
    OperatorUnlocked,
    PasskeyEnrolled,
    PasskeyRevoked,
    PoolTermsChanged,
    RoundSettled,
    RoundVoided,
    WagerLocked,
)
from controller.ledger.fault_register import fault_target
from controller.ledger.journal_binding import JournalBinding
from controller.ledger.passkeys import passkeys_of
from controller.ledger.state import LedgerError
from controller.pool_events import PoolResumed, PoolRetired, PoolSuspended, PoolTransferred
from controller.security.signatures import binding_of, sign, signatures_of, with_signature
from controller.wide_events import SiteLinked, SiteResumed, WideAreaJoined

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.events import AnyEvent, Signature
    from controller.ledger.state import LedgerState

E = TypeVar("E", bound="AnyEvent")

MAX_WINDOW: Final = timedelta(hours=1)
"""The longest a signature may be valid for."""
VALIDITY: Final = timedelta(minutes=15)
"""How long a signature made here is valid for (:func:`binding_for`)."""
SKEW: Final = timedelta(minutes=1)
"""How far before the event's time a signature made here starts to be valid (clocks differ)."""


def fingerprint(state: LedgerState) -> str:
    """What sets this journal's state apart from another's, to name a journal without identity.

    Its configuration revision, each pool's meters and counts, each operator and key: a journal
    identified with another's signed event (the same manager enrolled at both) has other meters,
    so its target differs and the event is refused. Two journals with no play and the same
    operators cannot be told apart this way (docs/security.md says so).
    """
    parts = [f"r{state.revision}"]
    parts += [
        f"{pool_id}:{pool.meter}:{pool.contributions}:{pool.wagers_count}:{pool.paid_cents}"
        for pool_id, pool in sorted(state.pools.items())
    ]
    parts += [f"{name}:{op.public_key}" for name, op in sorted(state.operators.items())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def new_identity() -> str:
    """A journal identity, made once at the first enrollment with a key (128 random bits)."""
    return f"journal-{uuid.uuid4().hex}"


def moment_of(text: str, what: str) -> datetime:
    """An event's or a binding's time (ISO 8601 with a zone), or refuse the event."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise LedgerError(f"{what} {text!r} is not an ISO 8601 time") from error
    if moment.tzinfo is None:
        raise LedgerError(f"{what} {text!r} has no time zone")
    return moment


def target_of(state: LedgerState, event: AnyEvent) -> str:  # noqa: PLR0912 - one per kind
    """What ``event`` acts on in ``state``: a signature names it, and is stale once it changed."""
    match event:
        case HitVerified():
            payout = state.pending.get(event.payout_id)
            amount = "none" if payout is None else str(payout.win_cents)
            return f"payout/{event.payout_id}/{amount}"
        case MeterAdjusted() | PoolTermsChanged():
            pool = state.pools.get(event.pool_id)
            if pool is None:
                return f"pool/{event.pool_id}/none"
            return f"pool/{event.pool_id}/r{pool.revision}/adjusted/{pool.adjustments_cents}"
        case RoundVoided() | WagerLocked() | RoundSettled():
            return f"round/{event.table_id}/{event.round_id}"
        case OperatorEnrolled():
            return f"operator/{event.name}/new/{event.public_key or ''}"
        case OperatorRevoked() | OperatorUnlocked():
            operator = state.operators.get(event.name)
            key = "none" if operator is None else operator.public_key
            return f"operator/{event.name}/{key}"
        case ManifestApproved():
            return f"manifest/{state.manifest.software if state.manifest else 'none'}"
        case ConfigurationApproved():
            return f"configuration/{state.authority.configuration or 'none'}/r{state.revision}"
        case SiteResumed():
            linked = state.sites.get(event.site)
            if linked is None:
                return f"halt/{event.site}/none"
            link = linked.link
            return f"halt/{event.site}/through/{link.through}/resumed/{link.resumed}"
        case SiteLinked():
            return f"site/{event.site}/{'linked' if event.site in state.sites else 'new'}"
        case HistoryRestored():
            return f"history/{event.lost_seq}/{event.lost_hash}"
        case JournalIdentified():
            return f"identify/{fingerprint(state)}"
        case WideAreaJoined():
            joined = "none" if state.chain is None else state.chain.central_key
            return f"wide-area/{event.site}/{joined}"
        case TableAgentEnrolled() | TableAgentRevoked():
            return _agent_target(state, event)
        case PasskeyEnrolled():
            operator = state.operators.get(event.operator)
            return f"passkey/{event.operator}/{operator.public_key if operator else 'none'}/new"
        case PasskeyRevoked():
            passkey = passkeys_of(state).get(event.credential_id)
            held = "none" if passkey is None else f"{passkey.operator}/revoked={passkey.revoked}"
            return f"passkey/{event.credential_id}/{held}"
        case PoolSuspended() | PoolResumed() | PoolRetired():
            return _pool_target(state, event.pool_id)
        case PoolTransferred():
            return f"{_pool_target(state, event.pool_id)}/to/{_pool_target(state, event.to_pool)}"
        case FaultsAcknowledged():
            return fault_target(state.authority.faults)
        case _:
            return str(type(event).__struct_config__.tag)


def _pool_target(state: LedgerState, pool_id: str) -> str:
    """A pool as its life's steps act on it: its revision, its state and what it holds."""
    pool = state.pools.get(pool_id)
    if pool is None:
        return f"pool/{pool_id}/none"
    held = f"{pool.meter}+{pool.reserve}+{pool.overflow}"
    return f"pool/{pool_id}/r{pool.revision}/{pool.status or 'in-play'}/{held}"


def _agent_target(state: LedgerState, event: TableAgentEnrolled | TableAgentRevoked) -> str:
    """A table agent's key as it stands (``none``), and for an enrollment the new key."""
    agents = state.authority.table_agents
    agent = None if isinstance(agents, msgspec.UnsetType) else agents.get(event.table_id)
    current = agent.key_id if agent is not None and agent.key_id else "none"
    target = f"table-agent/{event.table_id}/{current}"
    return f"{target}/new/{event.public_key}" if isinstance(event, TableAgentEnrolled) else target


def binding_for(state: LedgerState, event: AnyEvent) -> Binding | None:
    """The binding a signer gives a signature over ``event``, to be applied to ``state``.

    The window opens :data:`SKEW` before the event's time and lasts :data:`VALIDITY`. None on a
    journal written before identities existed and already signed (its signatures stay unbound,
    as its ledger checks them); a new identity for the first enrollment with a key, which
    names the journal.
    """
    if state.binding is not None:
        journal = state.binding.journal
    elif not state.authority.signed and isinstance(event, OperatorEnrolled):
        journal = new_identity()
    elif isinstance(event, JournalIdentified):
        journal = event.journal
    else:
        return None
    at = moment_of(event.at, "the event's time")
    return Binding(journal, target_of(state, event), utc_iso(at - SKEW), utc_iso(at + VALIDITY))


def _check_window(binding: Binding, event: AnyEvent, who: str) -> None:
    start = moment_of(binding.not_before, f"{who}'s signature: not_before")
    end = moment_of(binding.not_after, f"{who}'s signature: not_after")
    at = moment_of(event.at, "the event's time")
    if end < start or end - start > MAX_WINDOW:
        raise LedgerError(
            f"{who}'s signature is valid from {binding.not_before} to {binding.not_after}: "
            f"a window is at most {int(MAX_WINDOW.total_seconds() // 60)} minutes"
        )
    if not start <= at <= end:
        raise LedgerError(
            f"{who}'s signature is valid from {binding.not_before} to {binding.not_after}, "
            f"not at {event.at}"
        )


def late(event: AnyEvent, now: str) -> str | None:
    """Why ``event`` is refused at its live append: a signature whose window does not hold now.

    The ledger checks that the window holds the *event's* time, which whoever holds the signed
    bytes cannot change; but a signed event captured and sent hours later still names its own
    time. So the live append (the command line, the daemon: never a replay, which goes by the
    journaled time) also holds every bound signature's window to the controller's clock
    ``now``. None: every window holds it (or the ledger refuses the event for its binding).
    """
    moment = moment_of(now, "the controller's clock")
    for signature in signatures_of(event):
        binding = binding_of(signature)
        if binding is None:
            continue
        try:
            start = moment_of(binding.not_before, "not_before")
            end = moment_of(binding.not_after, "not_after")
        except LedgerError:
            return None  # the ledger refuses it, saying why
        if not start <= moment <= end:
            return (
                f"{signature.operator}'s signature is valid from {binding.not_before} to "
                f"{binding.not_after}, and the controller's clock is at {now}: a signature is "
                "taken only within its window (one captured and sent late, or signed on a clock "
                "that is off); sign it again"
            )
    return None


def _check(
    identity: JournalBinding, signature: Signature, target: str, event: AnyEvent, action: str
) -> None:
    binding = binding_of(signature)
    who = signature.operator
    if binding is None:
        raise LedgerError(
            f"{action}: {who}'s signature is not bound to this journal, a target and a time"
        )
    if binding.journal != identity.journal:
        raise LedgerError(
            f"{action}: {who} signed it for journal {binding.journal}, not this one "
            f"({identity.journal})"
        )
    if binding.target != target:
        raise LedgerError(
            f"{action}: {who} signed it against {binding.target}, but it would act on {target} "
            "(the state changed since: sign it again)"
        )
    _check_window(binding, event, who)


def bound(
    state: LedgerState, event: AnyEvent, action: str, signatures: list[Signature]
) -> LedgerState:
    """Refuse ``event`` unless every signature is bound to this journal, its target and now.

    The state after it records the event's id as applied, for good. On a journal without an
    identity (written before they existed), signatures stay unbound and nothing is recorded.
    """
    identity = state.binding
    if identity is None:
        if any(binding_of(signature) is not None for signature in signatures):
            raise LedgerError(
                f"{action}: a bound signature, but this journal has no identity to bind to"
            )
        return state
    if event.event_id in identity.applied:
        raise LedgerError(
            f"{action}: {event.event_id} was applied before; a signed action applies once, ever"
        )
    target = target_of(state, event)
    for signature in signatures:
        _check(identity, signature, target, event, action)
    recorded = replace(identity, applied=identity.applied | {event.event_id})
    return replace(state, binding=recorded)


def identified(state: LedgerState, event: OperatorEnrolled, signature: Signature) -> LedgerState:
    """The first enrollment with a key names the journal, when it is bound (new journals are).

    Its binding's journal becomes the journal's identity; its target and window are checked as
    any other's. An unbound first enrollment (a journal written before identities existed)
    leaves the journal without one.
    """
    binding = binding_of(signature)
    if binding is None:
        return state
    if not binding.journal.strip():
        raise LedgerError("the first enrollment names the journal: its identity is empty")
    identity = JournalBinding(binding.journal)
    _check(identity, signature, target_of(state, event), event, "enroll")
    return replace(state, binding=replace(identity, applied=frozenset({event.event_id})))


def signed_by(state: LedgerState, event: E, keys: Iterable[tuple[str, Ed25519PrivateKey]]) -> E:
    """``event`` signed by each operator in turn, each signature bound for ``state``.

    Every signer of this controller signs through here (the command line, the demo's own
    manager, the tests' operators), so that what they sign is what the ledger checks.
    """
    binding = binding_for(state, event)
    for name, key in keys:
        event = with_signature(event, sign(event, name, key, binding))  # type: ignore[assignment]
    return event
