"""The root of every journaled effect: a tagged struct, its kind in its ``effect`` field.

Kept apart from :mod:`controller.effects` (the ledger's effects and the union of every kind)
so that the wide-area link's effects (:mod:`controller.wide_effects`) derive from it without
a circle, as the events do from :mod:`controller.event_base`.
"""

from __future__ import annotations

import msgspec


class Effect(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="effect"):
    """Fields every effect has: the pool it touches, if any."""
