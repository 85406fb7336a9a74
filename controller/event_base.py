"""What every journaled event is: an id, a time, and (for some) operators' signatures.

:mod:`controller.events` defines the events themselves; this module holds only their base, so
that events defined in other modules (:mod:`controller.wide_events`) join the same tagged union
without an import cycle.
"""

from __future__ import annotations

import msgspec

SCHEMA_VERSION = 1


class Signature(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One operator's Ed25519 signature over an event (base64)."""

    operator: str
    signature: str


Signatures = list[Signature] | msgspec.UnsetType
"""The signatures an event carries; ``UNSET`` on events from before signatures existed."""


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind"):
    """Fields every event has."""

    event_id: str
    at: str
