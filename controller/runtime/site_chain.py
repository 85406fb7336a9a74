"""A property's chain to central, as its uplink sees it: the journal's outbox, the two keys.

The :class:`controller.ports.SiteChainView` the service hands a property's uplink
(docs/wide-area.md, "The link's runtime"): the messages its journal queued
(``site_messages``), each signed with the controller key as the uplink takes it, its own digest
of any of them, its totals (signed), central's key to check acknowledgements and awards by, and
a wait for the sequencer to journal more (:meth:`JournalSiteChain.committed` is a commit hook),
and the way to show central's wide-area meters on the property's own signs (its broadcast).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from controller.journal.errors import JournalError
from controller.ports import OutboxError
from controller.security.controller_key import signature_verifies
from controller.wide_effects import SiteMessageQueued
from controller.widearea.messages import GENESIS, SiteHead, SiteHello, SiteTotals, signed_bytes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.ledger_journal import LedgerJournal
    from controller.outputs import MeterUpdate, SignedHead
    from controller.ports import Receipt
    from controller.runtime.broadcast import Broadcast
    from controller.security.controller_key import ControllerKey
    from controller.widearea.messages import SiteMessage


@dataclass(slots=True)
class JournalSiteChain:
    """:class:`controller.ports.SiteChainView` over a property's journal and keys."""

    journal: LedgerJournal
    key: ControllerKey
    central_key: str
    grace_s: float
    broadcast: Broadcast | None = None
    """Where central's meters go: this property's sinks (its broker, its signs)."""
    head: SignedHead | None = None
    """The latest signed head of this controller (its high-water mark), for central to keep:
    the mark found at start-up, then each head signed (:meth:`head_signed`)."""
    _journaled: asyncio.Event = field(default_factory=asyncio.Event)
    _headed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def site(self) -> str:
        """This property's id to central (from the journal's state: the join)."""
        chain = self.journal.state.chain
        return "" if chain is None else chain.site

    def sent_high(self) -> int:
        """The chain's last ``site_seq``."""
        chain = self.journal.state.chain
        return 0 if chain is None else chain.seq

    def messages_after(self, after: int, limit: int) -> list[SiteMessage]:
        """The journal's messages after ``after``, each signed with the controller key.

        :class:`OutboxError` if the outbox cannot be read or was edited: nothing is sent.
        """
        return [
            message.signed(self.key.sign(message.digest.encode()))
            for message in self._read(after, limit)
        ]

    def digest_of(self, site_seq: int) -> str | None:
        """This property's digest of its message ``site_seq``; :class:`OutboxError` as above."""
        if site_seq == 0:
            return GENESIS
        found = self._read(site_seq - 1, 1)
        return found[0].digest if found and found[0].site_seq == site_seq else None

    def _read(self, after: int, limit: int) -> list[SiteMessage]:
        try:
            return self.journal.site_messages(after, limit)
        except JournalError as error:
            raise OutboxError(f"the outbox to central: {error}") from error

    def totals(self) -> SiteTotals:
        """The chain's totals and held claims as journaled now, signed."""
        chain = self.journal.state.chain
        if chain is None:
            return SiteTotals(self.site, 0, GENESIS, 0, 0, 0)
        held = tuple(sorted(int(claim) for claim in chain.held))
        totals = SiteTotals(
            chain.site, chain.seq, chain.head, chain.contributions, chain.wager_cents,
            chain.hits, held,
        )  # fmt: skip
        return msgspec.structs.replace(totals, signature=self.key.sign(signed_bytes(totals)))

    def signed_hello(self, hello: SiteHello) -> SiteHello:
        """The hello of a connection to central, signed: central answers no one else's nonce."""
        return msgspec.structs.replace(hello, signature=self.key.sign(signed_bytes(hello)))

    def head_signed(self, head: SignedHead) -> None:
        """The head schedule's hook: a head was signed; the uplink sends it to central."""
        self.head = head
        self._headed.set()

    def signed_head(self) -> SiteHead | None:
        """The latest signed head, in its message to central (signed with the site's key)."""
        if self.head is None:
            return None
        said = SiteHead(self.site, self.head)
        return msgspec.structs.replace(said, signature=self.key.sign(signed_bytes(said)))

    async def head_beyond(self, seq: int) -> None:
        """Return once a head of a row after ``seq`` is signed."""
        while self.head is None or self.head.seq <= seq:
            self._headed.clear()
            await self._headed.wait()

    def central_signed(self, data: bytes, signature: str) -> bool:
        """Whether central's key signed ``data``."""
        return signature_verifies(self.central_key, signature, data)

    def committed(self, receipts: Sequence[Receipt]) -> None:
        """The sequencer's commit hook: wake the uplink when messages were journaled."""
        if any(isinstance(e, SiteMessageQueued) for r in receipts for e in r.effects):
            self._journaled.set()

    def pools(self) -> list[str]:
        """The wide-area pools of the join, sorted."""
        chain = self.journal.state.chain
        return [] if chain is None else sorted(chain.pools)

    def show(self, update: MeterUpdate) -> None:
        """Hand central's meter to this property's sinks, as a local meter is."""
        if self.broadcast is not None:
            self.broadcast.publish([update])

    async def beyond(self, site_seq: int) -> None:
        """Return once a message after ``site_seq`` is journaled."""
        while self.sent_high() <= site_seq:
            self._journaled.clear()
            if self.sent_high() > site_seq:
                return
            await self._journaled.wait()
