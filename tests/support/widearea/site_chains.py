"""A linked property as central hears it, for central's tests: its key, its chain, its totals.

Real Ed25519 keys and the real chain (controller/widearea/messages.py): each message is the
next of the property's chain, signed, journaled by central as its source would
(:class:`~controller.wide_events.SiteReported`); its totals are signed too, and may misreport
its wagers. The pool is the journal rig's (tests/support/journal/journal_rig.py).
"""

from __future__ import annotations

from typing import Final

import msgspec

from controller.security.controller_key import ControllerKey
from controller.wide_events import (
    SiteLinked,
    SiteReported,
    SiteTotalsReported,
    site_event_id,
    totals_event_id,
)
from controller.widearea.messages import (
    GENESIS,
    Contribution,
    SiteBody,
    SiteMessage,
    SiteTotals,
    next_message,
    totals_bytes,
)
from support.journal.journal_rig import AT, POOL

WAGER: Final = 500
"""Each contribution's progressive wager, in cents."""


class LinkedProperty:
    """A property central links: its key, the messages of its chain so far."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.key = ControllerKey.generate()
        self.sent: list[SiteMessage] = []

    def linked(self, at: str = AT) -> SiteLinked:
        """Its link at central, by a manager, feeding the rig's pool."""
        return SiteLinked(f"link/{self.site}", at, self.site, self.key.public_key, [POOL], "mgr")

    def message(self, body: SiteBody, at: str = AT, *, prev: str | None = None) -> SiteMessage:
        """The next message of its chain, signed (after ``prev`` instead, to break the chain)."""
        if prev is None:
            prev = self.sent[-1].digest if self.sent else GENESIS
        message = next_message(self.site, len(self.sent) + 1, prev, at, body)
        message = message.signed(self.key.sign(message.digest.encode()))
        self.sent.append(message)
        return message

    def say(self, body: SiteBody, at: str = AT, *, prev: str | None = None) -> SiteReported:
        """The next message, as central's source journals it."""
        message = self.message(body, at, prev=prev)
        return SiteReported(site_event_id(self.site, message.site_seq), at, message)

    def contributions(self, first: int, count: int, at: str = AT) -> list[SiteReported]:
        """Progressive wagers locked at its table ``t1``, rounds ``first`` on."""
        return [
            self.say(Contribution(POOL, "t1", f"r{n}", 1, WAGER), at)
            for n in range(first, first + count)
        ]

    def totals(self, *, wager_cents: int | None = None) -> SiteTotals:
        """What it says it sent, signed (``wager_cents`` to misreport its wagers)."""
        contributions = [m for m in self.sent if isinstance(m.body, Contribution)]
        cents = WAGER * len(contributions) if wager_cents is None else wager_cents
        totals = SiteTotals(self.site, len(self.sent), self.sent[-1].digest, len(contributions),
                            cents, len(self.sent) - len(contributions))  # fmt: skip
        return msgspec.structs.replace(totals, signature=self.key.sign(totals_bytes(totals)))

    def reported(self, at: str = AT, *, wager_cents: int | None = None) -> SiteTotalsReported:
        """Its totals, as central's source journals them."""
        totals = self.totals(wager_cents=wager_cents)
        return SiteTotalsReported(totals_event_id(totals), at, totals)
