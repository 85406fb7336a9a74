"""What applying a wide-area link's event did, as journaled beside it (docs/wide-area.md).

Central's side: a property linked (:class:`SiteSet`), its message applied once
(:class:`SiteAdvanced`) or refused and its link halted (:class:`SiteRefused`), the link
resumed by a manager (:class:`SiteLinkResumed`), a hit claim awarded from the wide-area meter
(:class:`AwardMade`), the totals reconciled (:class:`SiteReconciled`). The property's side: the
next message of its chain journaled for central (:class:`SiteMessageQueued`), its wide-area
wagers opened or closed (:class:`WideAreaStatus`). Each is one kind of
:data:`controller.effects.AnyEffect`, encoded as every effect is.
"""

from __future__ import annotations

from controller.effect_base import Effect
from controller.widearea.messages import SiteMessage


class SiteSet(Effect, frozen=True, tag="site-set"):
    """A property linked to central (docs/wide-area.md), feeding ``pools``."""

    site: str
    key_id: str
    pools: list[str]


class SiteAdvanced(Effect, frozen=True, tag="site-advanced"):
    """Central applied a property's message ``site_seq`` (digest ``digest``), once."""

    site: str
    site_seq: int
    digest: str


class SiteRefused(Effect, frozen=True, tag="site-refused"):
    """Central refused a property's message and halted its link until a manager acts."""

    site: str
    site_seq: int
    reason: str
    detail: str


class SiteLinkResumed(Effect, frozen=True, tag="site-link-resumed"):
    """A manager resumed a property's halted link: central expects ``through`` + 1 again."""

    site: str
    through: int
    halted: str
    """Why the link had halted."""


class AwardMade(Effect, frozen=True, tag="award"):
    """Central paid a property's hit claim from the wide-area meter (docs/wide-area.md)."""

    site: str
    claim_seq: int
    hit_id: str
    pool_id: str
    table_id: str
    round_id: str
    seat: int
    line: str
    amount_cents: int


class SiteReconciled(Effect, frozen=True, tag="site-reconciled"):
    """Central compared a property's totals with what it applied, through ``through``."""

    site: str
    through: int
    matched: bool
    problems: list[str]


class SiteMessageQueued(Effect, frozen=True, tag="site-message"):
    """A property journaled the next message of its chain, for central (docs/wide-area.md).

    Unsigned here: the link's runtime signs it with the controller key as it sends it.
    """

    message: SiteMessage


class WideAreaStatus(Effect, frozen=True, tag="wide-area-status"):
    """The property's wide-area wagers opened or closed, and why."""

    open: bool
    reason: str
