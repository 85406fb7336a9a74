"""What every journaled event is: an id, a time, and (for some) operators' signatures.

:mod:`controller.events` defines the events themselves; this module holds only their base, so
that events defined in other modules (:mod:`controller.wide_events`) join the same tagged union
without an import cycle.
"""

from __future__ import annotations

import msgspec

SCHEMA_VERSION = 1


class Binding(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where and when an operator's signature is valid (docs/security.md, "Bound signatures").

    ``journal`` is the identity of the journal the action belongs to (made once, at the first
    enrollment with a key); ``target`` names the state the action was signed against, as the
    ledger names it (:func:`controller.ledger.binding.target_of`: the payout and its amount, the
    pool's revision, the halt of a link, the enrolled key); the event's time must fall in
    ``[not_before, not_after]`` (UTC, ISO 8601). The signature covers all of it.
    """

    journal: str
    target: str
    not_before: str
    not_after: str


class Signature(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One operator's Ed25519 signature over an event (base64), and what it is bound to.

    ``binding`` is ``UNSET`` (never encoded) on signatures made before signatures were bound,
    so that old journals read, chain and verify exactly as they were written.
    """

    operator: str
    signature: str
    binding: Binding | msgspec.UnsetType = msgspec.UNSET


Signatures = list[Signature] | msgspec.UnsetType
"""The signatures an event carries; ``UNSET`` on events from before signatures existed."""


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind"):
    """Fields every event has."""

    event_id: str
    at: str
