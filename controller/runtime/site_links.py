"""Central's linked properties, as the MQTT source sees them: the ledger's state, central's key.

The :class:`controller.ports.SiteLinks` the service hands the driver context at central
(docs/wide-area.md, "The link's runtime"): each linked property's chain as the
journal's state holds it after the last commit, and the controller key's signature, so that
the driver answers properties without reaching into the ledger or holding the key itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from controller.security.controller_key import signature_verifies
from controller.widearea.messages import Award, signed_bytes

if TYPE_CHECKING:
    from controller.journal.port import JournalPort
    from controller.security.controller_key import ControllerKey
    from controller.widearea.site_link import SiteLink


@dataclass(frozen=True, slots=True)
class JournalSiteLinks:
    """:class:`controller.ports.SiteLinks` over a journal's state and a controller key."""

    journal: JournalPort[Any]
    key: ControllerKey
    heartbeat_s: float = 5.0

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
