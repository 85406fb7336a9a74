"""The events of a wide-area link, as central and a property journal them (docs/wide-area.md).

Central's:

* :class:`SiteLinked`: a manager links a property to central: the property's controller key
  (its messages must carry its signature) and the wide-area pools its tables may feed.
* :class:`SiteReported`: one of the property's chained messages (a contribution, a hit claim),
  journaled once under the id ``site/<site>/<site_seq>``, so that a resend is a duplicate
  whatever path it took.
* :class:`SiteTotalsReported`: what the property says it has sent, after a reconnection; central
  reconciles it with what it applied.
* :class:`SiteResumed`: a manager resumes a halted link, once its cause is settled.

A property's:

* :class:`WideAreaJoined`: a manager joins the property to central: its site id, central's
  controller key (central's acknowledgements and awards must carry its signature) and the
  wide-area pools its tables may play, each with its progressive paytable;
* :class:`WideAreaStatusChanged`: its wide-area wagers open or close (central heard within the
  grace period and reconciled, or not), journaled by the link's runtime so that the ledger
  refuses a wide-area wager while closed whatever entry path it takes;
* :class:`WideAreaAwarded`: central's award of one of its hit claims, as received.
"""

from __future__ import annotations

import hashlib

import msgspec

from controller.event_base import Event, Signatures
from controller.widearea.messages import Award, SiteMessage, SiteTotals


class SiteLinked(Event, frozen=True, tag="site-linked"):
    """A property linked to central by a manager (signed): its key and the pools it feeds."""

    site: str
    public_key: str
    pools: list[str]
    by: str
    signatures: Signatures = msgspec.UNSET


class SiteResumed(Event, frozen=True, tag="site-resumed"):
    """A manager resumes a property's halted link (signed): central takes its messages again.

    Only once the halt's cause is settled (docs/wide-area.md, "A halted link"): the pool linked
    that the property fed, the software that misreported its totals fixed. A message that is
    still wrong halts the link again.
    """

    site: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class SiteReported(Event, frozen=True, tag="site-reported"):
    """A property's message, as received (its signature and chain checked by the ledger)."""

    message: SiteMessage


class SiteTotalsReported(Event, frozen=True, tag="site-totals"):
    """A property's report of what it has sent, after a reconnection."""

    totals: SiteTotals


class WideAreaJoined(Event, frozen=True, tag="wide-area-joined"):
    """A property joined to central (signed): its site, central's key, the pools it plays."""

    site: str
    central_key: str
    pools: dict[str, str]
    """Each wide-area pool's id and its progressive paytable's name."""
    by: str
    signatures: Signatures = msgspec.UNSET


class WideAreaStatusChanged(Event, frozen=True, tag="wide-area-status"):
    """The property's wide-area wagers open or close, and why (a sign shows it)."""

    open: bool
    reason: str = ""


class WideAreaAwarded(Event, frozen=True, tag="wide-area-awarded"):
    """Central's award of one of the property's hit claims, as received."""

    award: Award


def site_event_id(site: str, site_seq: int, resumed: int = 0) -> str:
    """The journal id of a property's message: a resend by any path shares it.

    After the link's ``resumed``-th resumption by a manager, ``site/<site>/<seq>/resumed-<k>``:
    the message that halted the link was journaled under the plain id, and once the cause is
    settled the same message must be journaled again to be applied (docs/wide-area.md, "A
    halted link").
    """
    plain = f"site/{site}/{site_seq}"
    return plain if resumed == 0 else f"{plain}/resumed-{resumed}"


def totals_event_id(totals: SiteTotals) -> str:
    """The journal id of a totals report: one per (through, head, counts, claims held) reported.

    A resend of the same report is a duplicate; another report through the same ``site_seq``
    is another event, not a reuse of the id: the held claims change once they are paid (that
    report stops central sending their awards), and the counts change when a property whose
    software misreported them is fixed and reports again after a manager resumed its halted
    link (docs/wide-area.md, "A halted link").
    """
    held = ",".join(map(str, totals.held))
    counts = f"{totals.contributions}/{totals.wager_cents}/{totals.hits}/{held}"
    digest = hashlib.sha256(counts.encode()).hexdigest()[:16]
    return f"site/{totals.site}/totals/{totals.through}/{totals.head[:16]}/{digest}"


def award_event_id(award: Award) -> str:
    """The journal id of an award at the property: one per claim, whatever the resends."""
    return f"award/{award.site}/{award.claim_seq}"
