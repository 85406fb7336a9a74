"""A table agent's key, as the journal holds it, and the agent's signature on what it forwards.

A table agent (``jackpotd agent``, docs/ha.md "Table agents") forwards its table's device
events to the controller over MQTT, where any device with valid broker credentials could
publish on the table's topics too. So a manager enrolls one Ed25519 public key per table agent
(:class:`TableAgentEnrolled`, signed like every enrollment), and from then on the ledger takes
the table's device events only when they carry a valid :class:`AgentSignature` by that key
(controller/ledger/table_agents.py). :class:`TableAgentRevoked` withdraws it (a key that may be
in other hands): the table's device events are then refused until a manager enrolls a new key,
never taken unsigned again. Enrolling a new key for a table that has one replaces it (a
rotation); a key once enrolled, for an agent or an operator, is never enrolled again.
"""

from __future__ import annotations

import msgspec

from controller.event_base import Event, Signatures


class AgentSignature(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A table agent's Ed25519 signature (base64) over one device event it forwarded.

    ``key_id`` names the agent's key (16 hex digits of the SHA-256 of the raw public key),
    ``at`` is when the agent stored the event in its outbox (UTC, ISO 8601, the agent's clock):
    the signature covers both, the table and the event itself with its controller-stamped time
    left out (controller/agent_signature.py).
    """

    key_id: str
    at: str
    signature: str


AgentSigned = AgentSignature | msgspec.UnsetType
"""The agent's signature a device event carries; ``UNSET`` (never encoded) when it has none."""


class TableAgentEnrolled(Event, frozen=True, tag="table-agent-enrolled"):
    """A manager enrolls the public key of a table's agent (or replaces the one it had)."""

    table_id: str
    public_key: str
    """Base64 of the raw 32-byte Ed25519 public key."""
    key_id: str
    by: str
    reason: str = "table agent enrolled"
    signatures: Signatures = msgspec.UNSET


class TableAgentRevoked(Event, frozen=True, tag="table-agent-revoked"):
    """A manager withdraws a table agent's key: nothing of the table is taken until a new one."""

    table_id: str
    key_id: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET
