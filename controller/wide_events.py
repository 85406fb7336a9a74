"""The events of a wide-area link, as central journals them (docs/wide-area.md).

* :class:`SiteLinked`: a manager links a property to central: the property's controller key
  (its messages must carry its signature) and the wide-area pools its tables may feed.
* :class:`SiteReported`: one of the property's chained messages (a contribution, a hit claim),
  journaled once under the id ``site/<site>/<site_seq>``, so that a resend is a duplicate
  whatever path it took.
* :class:`SiteTotalsReported`: what the property says it has sent, after a reconnection; central
  reconciles it with what it applied.

The property's own events of the link are its ledger's business and live beside these once
built (docs/wide-area.md, "Not yet").
"""

from __future__ import annotations

import msgspec

from controller.event_base import Event, Signatures
from controller.widearea.messages import SiteMessage, SiteTotals


class SiteLinked(Event, frozen=True, tag="site-linked"):
    """A property linked to central by a manager (signed): its key and the pools it feeds."""

    site: str
    public_key: str
    pools: list[str]
    by: str
    signatures: Signatures = msgspec.UNSET


class SiteReported(Event, frozen=True, tag="site-reported"):
    """A property's message, as received (its signature and chain checked by the ledger)."""

    message: SiteMessage


class SiteTotalsReported(Event, frozen=True, tag="site-totals"):
    """A property's report of what it has sent, after a reconnection."""

    totals: SiteTotals


def site_event_id(site: str, site_seq: int) -> str:
    """The journal id of a property's message: a resend by any path shares it."""
    return f"site/{site}/{site_seq}"


def totals_event_id(totals: SiteTotals) -> str:
    """The journal id of a totals report: one reconciliation per (through, head) reported."""
    return f"site/{totals.site}/totals/{totals.through}/{totals.head[:16]}"
