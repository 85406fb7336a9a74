"""What a table agent signs of each device event it forwards, and how the ledger checks it.

The agent signs at its outbox, when it forwards a stored device message (drivers/agent/wire.py),
and the ledger checks the signature on the journaled event (controller/ledger/table_agents.py),
so the bytes must be ones both can make from the event alone:

* :data:`DOMAIN`, so that an agent's signature is never an operator's, a checkpoint's or a
  meter's;
* the canonical JSON (keys sorted) of ``{"at", "key_id", "table"}``: the table the agent
  serves, its key's id, and when it stored the event (its own clock); then a newline;
* the event's canonical JSON with its ``at`` empty and no ``agent_signature``: the controller
  dates what it journals with its own clock when the message arrives, which the agent cannot
  know, so the agent's time stands for it in the line above and the ledger bounds the two
  apart (:data:`controller.ledger.table_agents.MAX_AGE`).

The event carries its id (``table/device/seq``), its table, device and sequence number and
every field the device sent, so a signature cannot be moved to another table, device, sequence
number or value. The agent cannot know the journal's identity (nothing it could read from the
controller is signed for it), so a signature is not bound to one journal: a key is made on the
agent for one enrollment in one journal (docs/ha.md, "Signed forwarding").

This module is vocabulary, so that the agent's driver (which may not import the security
layer, docs/architecture.md) reaches it; the agent is handed an :class:`AgentSigner`, the
key's id and its ``sign`` function.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.agent_events import AgentSignature
from controller.events import encode_event

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.events import AnyEvent

DOMAIN: Final = b"jackpotd table agent signature v1\n"
AGENT_SIGNATURE: Final = "agent-signature"
"""How the reason of every refusal of a table's word for its agent's signature starts: the
journal's fault, the writer's answer (an agent's acknowledgement never counts such a refusal)."""

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


def agent_signed_bytes(event: AnyEvent, table_id: str, key_id: str, at: str) -> bytes:
    """What the agent of ``table_id`` signs of ``event``, stored at ``at`` (module docstring)."""
    unsigned = msgspec.structs.replace(event, at="")
    if hasattr(unsigned, "agent_signature"):
        unsigned = msgspec.structs.replace(unsigned, agent_signature=msgspec.UNSET)
    stamp = _CANONICAL.encode({"at": at, "key_id": key_id, "table": table_id})
    return DOMAIN + stamp + b"\n" + encode_event(unsigned)


@dataclass(frozen=True, slots=True)
class AgentSigner:
    """A table agent's key id and its ``sign(data) -> raw signature`` function (not the key)."""

    table_id: str
    key_id: str
    sign: Callable[[bytes], bytes]

    def signature(self, event: AnyEvent, at: str) -> AgentSignature:
        """The agent's signature over ``event``, stored in its outbox at ``at``."""
        data = agent_signed_bytes(event, self.table_id, self.key_id, at)
        return AgentSignature(self.key_id, at, base64.b64encode(self.sign(data)).decode())


def agent_signature_of(event: AnyEvent) -> AgentSignature | None:
    """The agent's signature an event carries; None if it has none (or cannot have one)."""
    found = getattr(event, "agent_signature", msgspec.UNSET)
    return found if isinstance(found, AgentSignature) else None


def agent_signature_verifies(public_key: str, table_id: str, event: AnyEvent) -> bool:
    """Whether ``event``'s agent signature is the holder of ``public_key`` (agent of the table)."""
    signature = agent_signature_of(event)
    if signature is None:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        data = agent_signed_bytes(event, table_id, signature.key_id, signature.at)
        key.verify(base64.b64decode(signature.signature, validate=True), data)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
