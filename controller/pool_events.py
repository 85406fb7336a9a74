"""A progressive pool's life after it opened: suspended, resumed, transferred, retired.

A pool taken out of play (a malfunction, a table removed) keeps its meters exactly and refuses
every progressive wager until a manager resumes it (:class:`PoolSuspended`,
:class:`PoolResumed`); its meter, reserve and overflow move to another pool under dual control
(:class:`PoolTransferred`); it is closed only with a disposition of every cent
(:class:`PoolRetired`). Each is an operator's signed action with its reason. The ledger's rules
for them are in controller/ledger/pool_life.py (docs/money.md, "A pool's life"; docs/rules.md
cites the clauses they follow). They join the journal's tagged union in
:mod:`controller.events`.
"""

from __future__ import annotations

from typing import Final

import msgspec

from controller.event_base import Event, Signatures

TRANSFERRED: Final = "transferred"
"""A retirement's disposition: the pool's money went to another pool (:class:`PoolTransferred`)."""
FINAL_AWARD: Final = "final-award"
"""A retirement's disposition: what the pool holds is paid in one documented final award."""
ORPHANED: Final = "orphaned"
"""A retirement's disposition: what the pool holds is kept on record for a later pool."""
DISPOSITIONS: Final = (TRANSFERRED, FINAL_AWARD, ORPHANED)


class PoolSuspended(Event, frozen=True, tag="pool-suspended"):
    """A supervisor or manager takes a pool out of play: its meters stay, its wagers are refused."""

    pool_id: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class PoolResumed(Event, frozen=True, tag="pool-resumed"):
    """A manager puts a suspended pool back in play."""

    pool_id: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET


class PoolTransferred(Event, frozen=True, tag="pool-transferred"):
    """Two managers move a pool's meter, reserve and overflow, exactly, onto another pool.

    The source is left suspended with nothing on it (or retired, with this transfer as its
    disposition).
    """

    pool_id: str
    to_pool: str
    by: str
    reason: str
    signatures: Signatures = msgspec.UNSET
    cause: str | msgspec.UnsetType = msgspec.UNSET
    """The documented cause (controller/ledger/jurisdictions.py), which a jurisdiction profile
    may ask for; ``UNSET`` (never encoded) when none is named."""


class PoolRetired(Event, frozen=True, tag="pool-retired"):
    """A manager closes a pool for good, with the disposition of every cent it held.

    ``disposition`` is one of :data:`DISPOSITIONS`; ``award`` documents a final award (who was
    paid and how), empty otherwise.
    """

    pool_id: str
    disposition: str
    by: str
    reason: str
    award: str = ""
    signatures: Signatures = msgspec.UNSET
    cause: str | msgspec.UnsetType = msgspec.UNSET
    """The documented cause, as a transfer's."""
