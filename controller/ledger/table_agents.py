"""Table agents' keys, and the rule that an enrolled table's devices speak only through its agent.

A device with valid broker credentials can publish on any table's topics (docs/security.md);
so can anyone who reaches the broker with them. A manager therefore enrolls one Ed25519 key
per table agent (:class:`~controller.agent_events.TableAgentEnrolled`), and the ledger, which
alone decides, holds every device event of that table to it (docs/ha.md, "Signed
forwarding"):

* **Enrollment** is a manager's signed action like an operator's (:func:`require`, bound to
  the journal, the table's current key and the new one, and a time; two managers once two are
  enrolled), on a journal with an identity, for a configured table. One key, one holder: a key
  enrolled or once enrolled for anyone (an operator, another table's agent, this table's
  agent before) is refused. Enrolling a table that has a key replaces it (a rotation) and the
  old key is retired for good; a revocation retires it and leaves the table with no key.
* **The table's word** (:func:`check_agent_word`). On a journal with an identity, a device
  event (a bet, a lock, a card, the end of a deal, a device's void) of a table with an
  enrolled agent is applied only if it carries a signature by that table's key that verifies
  over the event and the table (:mod:`controller.agent_signature`) and was made when the agent
  stored the event: no later than :data:`SKEW` after the controller's time of the event and
  no earlier than :data:`MAX_AGE` before it. Anything else is refused whole, with a reason
  that starts ``agent-signature:``; after a revocation everything is, until a new key.
  A table's status is the controller's own decision (its liveness, its configuration, a
  status topic's last will) and moves no meter, so it is taken as before.

Tables without an enrolled agent, and journals without an identity (written before they
existed), are as they were: their rows replay exactly as written.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Final

import msgspec

from controller.agent_signature import (
    AGENT_SIGNATURE,
    agent_signature_of,
    agent_signature_verifies,
)
from controller.events import DeviceEvent, RoundVoided
from controller.ledger.authority import require
from controller.ledger.binding import moment_of
from controller.ledger.lockouts import has_identity, key_taken
from controller.ledger.operator_events import canonical_key, enrolling_managers
from controller.ledger.operators import TableAgent
from controller.ledger.state import LedgerError, table_of
from controller.ledger.voids import DEVICE
from controller.security.controller_key import key_id

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.agent_events import TableAgentEnrolled, TableAgentRevoked
    from controller.effects import AnyEffect
    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState

    Outcome = tuple[LedgerState, list[AnyEffect]]

SKEW: Final = timedelta(minutes=2)
"""How far after the controller's time of an event its agent may say it stored it (clocks)."""
MAX_AGE: Final = timedelta(hours=12)
"""How long before the controller's time of an event its agent may have stored it.

An agent keeps what the controller has not acknowledged and sends it again until it is
(docs/ha.md, "Table agents"); past this, a signed event is taken for a replay of an old one,
whose id the live journal may no longer hold once its rows were archived.
"""


def agents_of(state: LedgerState) -> Mapping[str, TableAgent]:
    """Each table's enrolled agent (a revoked one with no key), by table."""
    agents = state.authority.table_agents
    return {} if isinstance(agents, msgspec.UnsetType) else agents


def _with_agent(state: LedgerState, table_id: str, agent: TableAgent) -> LedgerState:
    """The state with ``table_id``'s agent set, the key it had (if any) retired for good."""
    authority = state.authority
    before = agents_of(state).get(table_id)
    kept = authority.retired_keys
    retired = () if isinstance(kept, msgspec.UnsetType) else kept
    if before is not None and before.public_key and before.public_key not in retired:
        retired = (*retired, before.public_key)
    agents = {**agents_of(state), table_id: agent}
    changed = replace(authority, table_agents=agents, retired_keys=retired or msgspec.UNSET)
    return replace(state, authority=changed)


def enroll_agent(state: LedgerState, event: TableAgentEnrolled) -> Outcome:
    """A manager enrolls (or replaces) a table agent's key (see the module docstring)."""
    if not has_identity(state):
        raise LedgerError(
            "enroll a table agent: only on a journal with an identity (its authority signed "
            "and bound, controller/ledger/binding.py)"
        )
    table_of(state, event.table_id)
    if not canonical_key(event.public_key):
        raise LedgerError("public_key: not the base64 of a 32-byte Ed25519 public key")
    if event.key_id != key_id(event.public_key):
        raise LedgerError(f"key_id {event.key_id!r} is not the id of that public key")
    state = require(state, event, "enroll", signers=enrolling_managers(state))
    holder = key_taken(state, event.public_key)
    if holder is not None:
        raise LedgerError(
            f"public key {event.public_key[:12]}... is or was enrolled ({holder}): one key, "
            "one holder; make a new key on the table's agent"
        )
    return _with_agent(state, event.table_id, TableAgent(event.public_key, event.key_id)), []


def revoke_agent(state: LedgerState, event: TableAgentRevoked) -> Outcome:
    """A manager withdraws a table agent's key: nothing of the table is taken until a new one."""
    agent = agents_of(state).get(event.table_id)
    if agent is None or not agent.public_key:
        raise LedgerError(f"table {event.table_id} has no enrolled agent key to revoke")
    if event.key_id != agent.key_id:
        raise LedgerError(
            f"table {event.table_id}'s agent key is {agent.key_id}, not {event.key_id}"
        )
    if not event.reason.strip():
        raise LedgerError("a revocation needs a reason")
    state = require(state, event, "enroll")
    return _with_agent(state, event.table_id, TableAgent()), []


def _device_word(event: AnyEvent) -> str | None:
    """The table of a device's event (its input or its void); None for any other event."""
    if isinstance(event, DeviceEvent):
        return event.table_id
    if isinstance(event, RoundVoided) and event.by.startswith(DEVICE):
        return event.table_id
    return None


def agent_refusal(state: LedgerState, event: AnyEvent) -> str | None:
    """Why ``event`` is refused for its agent's signature; None: the rule lets it through."""
    table_id = _device_word(event)
    if table_id is None or not has_identity(state):
        return None
    agent = agents_of(state).get(table_id)
    if agent is None:
        return None
    why = _why_refused(agent, table_id, event)
    return None if why is None else f"{AGENT_SIGNATURE}: table {table_id}: {why}"


def _why_refused(agent: TableAgent, table_id: str, event: AnyEvent) -> str | None:
    if not agent.public_key:
        return "its agent's key was revoked; nothing of it is taken until a new key is enrolled"
    signature = agent_signature_of(event)
    if signature is None:
        return f"unsigned; the table's enrolled agent (key {agent.key_id}) signs its events"
    if signature.key_id != agent.key_id:
        return f"signed by key {signature.key_id}, not the table's agent key {agent.key_id}"
    if not agent_signature_verifies(agent.public_key, table_id, event):
        return f"the signature of key {agent.key_id} does not verify over this event"
    try:
        stored = moment_of(signature.at, "the agent's time")
        at = moment_of(event.at, "the event's time")
    except LedgerError as error:
        return str(error)
    if stored > at + SKEW:
        return f"the agent stored it at {signature.at}, after the controller's time {event.at}"
    if at - stored > MAX_AGE:
        hours = int(MAX_AGE.total_seconds() // 3600)
        return (
            f"the agent stored it at {signature.at}, more than {hours} hours before the "
            f"controller's time {event.at} (an old event sent again)"
        )
    return None


def check_agent_word(state: LedgerState, event: AnyEvent) -> None:
    """Refuse ``event`` (:class:`LedgerError`) if :func:`agent_refusal` gives a reason."""
    why = agent_refusal(state, event)
    if why is not None:
        raise LedgerError(why)
