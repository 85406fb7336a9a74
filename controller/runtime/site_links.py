"""Central's linked properties, as the MQTT source sees them: the ledger's state, central's key.

The :class:`controller.ports.SiteLinks` the service hands the driver context at central
(docs/wide-area.md, "The link's runtime"): each linked property's chain as the
journal's state holds it after the last commit, and the controller key's signature, so that
the driver answers properties without reaching into the ledger or holding the key itself.

It also keeps each linked property's highest valid signed head (its high-water mark, sent on
the uplink as :class:`~controller.widearea.messages.SiteHead`), in central's file of them
(``marks``: :func:`controller.journal.high_water.site_heads_path`, replaced atomically at each
higher head, read back when central starts), and answers it to the property's hello, signed
and naming the hello's nonce (:class:`~controller.widearea.messages.CentralMark`): a property
whose journal, high-water file and broker's copy were all rolled back is held to it at its
next start (docs/security.md, "History never goes back").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from controller.journal.high_water import head_verifies, read_site_heads, write_site_heads
from controller.security.controller_key import signature_verifies
from controller.widearea.messages import Award, CentralMark, signed_bytes

if TYPE_CHECKING:
    from pathlib import Path

    from controller.ledger_journal import LedgerJournal
    from controller.outputs import SignedHead
    from controller.security.controller_key import ControllerKey
    from controller.widearea.site_link import SiteLink


log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JournalSiteLinks:
    """:class:`controller.ports.SiteLinks` over a journal's state and a controller key."""

    journal: LedgerJournal
    key: ControllerKey
    heartbeat_s: float = 5.0
    marks: Path | None = None
    """Central's file of its properties' signed heads (None: kept in memory only)."""
    _heads: dict[str, SignedHead] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.marks is not None:
            self._heads.update(read_site_heads(self.marks))

    def keep_head(self, site: str, head: SignedHead) -> bool:
        """Keep ``head`` as ``site``'s mark if its key signed it and it is its highest.

        Valid: signed under the linked property's key as every head of it is. A head under
        another key id than the one kept (the property's key rotated, and linked anew) replaces
        it; otherwise only a higher row does. Kept in the file before it counts: a central
        that restarts answers what it kept.
        """
        linked = self.journal.state.sites.get(site)
        if linked is None or not head_verifies(head, [linked.public_key]):
            log.warning(
                "site %s: a head of row %d not signed by its key: passed over", site, head.seq
            )
            return False
        kept = self._heads.get(site)
        if kept is not None and kept.key_id == head.key_id and head.seq <= kept.seq:
            return False
        self._heads[site] = head
        if self.marks is not None:
            try:
                write_site_heads(self.marks, self._heads)
            except OSError as error:
                # One line with the reason: a full disk is no bug to trace.
                log.error(  # noqa: TRY400
                    "%s: cannot keep site %s's head of row %d: %s",
                    self.marks, site, head.seq, error,
                )  # fmt: skip
        return True

    def mark_answer(self, site: str, nonce: str) -> CentralMark:
        """The mark kept of ``site`` (None if none), naming its hello's ``nonce``, signed."""
        answer = CentralMark(site, nonce, self._heads.get(site))
        return msgspec.structs.replace(answer, signature=self.sign(signed_bytes(answer)))

    def sites(self) -> list[str]:
        """The linked properties' ids, sorted."""
        return sorted(self.journal.state.sites)

    def link(self, site: str) -> SiteLink | None:
        """A linked property's chain as applied; None if not linked."""
        linked = self.journal.state.sites.get(site)
        return None if linked is None else linked.link

    def sign(self, data: bytes) -> str:
        """Central's controller key's signature."""
        return self.key.sign(data)

    def signed_by(self, site: str, data: bytes, signature: str) -> bool:
        """Whether the linked property's key signed ``data``."""
        linked = self.journal.state.sites.get(site)
        return linked is not None and signature_verifies(linked.public_key, signature, data)

    def awards(self, site: str) -> list[Award]:
        """The awards a property may not have journaled yet, signed, oldest claim first."""
        linked = self.journal.state.sites.get(site)
        if linked is None:
            return []
        epoch = self.journal.epoch
        found = []
        for owed in sorted(linked.awards.values(), key=lambda award: award.claim_seq):
            award = Award(
                site, owed.claim_seq, owed.hit_id, owed.pool_id, owed.line, owed.amount_cents,
                self.journal.head[0], epoch,
            )  # fmt: skip
            found.append(msgspec.structs.replace(award, signature=self.sign(signed_bytes(award))))
        return found
