"""The wide-area link's part of the ledger state: central's linked properties, a property's chain.

:attr:`controller.ledger.state.LedgerState.sites` holds central's :class:`LinkedSite` entries
and :attr:`~controller.ledger.state.LedgerState.chain` a property's :class:`SiteChain`; the
handlers that change them are :mod:`.central` and :mod:`.property`. Kept apart from them, and
importing nothing of the ledger, so that the state names its wide-area part without the
handlers that import the state (docs/architecture.md, "No circles").
"""

from __future__ import annotations

from typing import Final

import msgspec

from controller.widearea.messages import GENESIS
from controller.widearea.site_link import SiteLink


class LinkedSite(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A property central follows: its key, the pools it feeds, and its chain so far."""

    public_key: str
    pools: tuple[str, ...]
    paytables: dict[str, str]
    """Pool id to its progressive paytable's text."""
    link: SiteLink
    awards: dict[str, AwardOwed] = msgspec.field(default_factory=dict)
    """Awards of its claims (by ``claim_seq``, as text) it may not have journaled yet: sent
    again until its totals no longer list the claim as held (docs/wide-area.md)."""


class AwardOwed(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An award central made of a property's hit claim, as the property is sent it."""

    claim_seq: int
    hit_id: str
    pool_id: str
    line: str
    amount_cents: int


NEVER_HEARD: Final = "never heard from central"


class HeldClaim(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A seat's wide-area hit, settled at the property and waiting for central's award."""

    payout_id: str
    pool_id: str
    table_id: str
    round_id: str
    seat: int
    wager_cents: int
    returned_cents: int


class SiteChain(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The property's link to central: who it is, its chain so far, its held hits."""

    site: str
    central_key: str
    pools: dict[str, str]
    """Each wide-area pool's id and its progressive paytable's name."""
    seq: int = 0
    head: str = GENESIS
    contributions: int = 0
    wager_cents: int = 0
    hits: int = 0
    open: bool = False
    reason: str = NEVER_HEARD
    held: dict[str, HeldClaim] = msgspec.field(default_factory=dict)
    """By the claim's ``site_seq`` (as text: a JSON key)."""
