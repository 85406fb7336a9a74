"""A property's side of the wide-area link in the ledger: its chain, closed wagers, held hits.

docs/wide-area.md. The property does not own a wide-area pool: central does. Its ledger:

* joins central (:class:`WideAreaJoined`, a manager's signed decision): its site id, central's
  key, and the wide-area pools its tables may play with their progressive paytables;
* turns each progressive wager locked on such a pool into the next message of its chain
  (:func:`contribute`), journaled as the lock's effect (:class:`SiteMessageQueued`) in the same
  transaction, before anything is sent; no local meter moves. While the link is closed
  (:class:`WideAreaStatusChanged`: central not heard within the grace period, or not yet
  reconciled) the wager is refused, as a closed table's is (Michigan R 432.1841);
* settles a round on such a pool as at the paytable's seed (:func:`shadow_pool`), then takes
  every meter pay out of the settlement (:func:`hold_meter_pays`): the seat's pay is **held**,
  and a hit claim carrying the seat's seven cards joins the chain. Fixed pays are the
  property's and paid at once. Only central awards a wide-area hit, at the point where it
  sequences the claim, whether or not the link is up when the round settles;
* pays a held hit when central's award arrives (:class:`WideAreaAwarded`), signed with
  central's key: the paytable's fixed part of the line central chose, plus central's amount.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec

from controller.ledger.authority import CONFIGURATION, require
from controller.ledger.payout_effects import payout_effect
from controller.ledger.pool import Pool, PoolTerms
from controller.ledger.settlement import HitOrder, Payout, PayoutKind, PayoutStatus, flagged
from controller.ledger.state import LedgerError, LedgerState
from controller.ledger.wide_area.sites import HeldClaim, SiteChain
from controller.rules.paytable import FixedPay, MeterPay
from controller.rules.spots import Spot
from controller.security.controller_key import signature_verifies
from controller.wide_effects import SiteMessageQueued, WideAreaStatus
from controller.widearea.messages import (
    Contribution,
    HitClaim,
    SiteBody,
    next_message,
    signed_bytes,
)

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.ledger.settlement import Settlement, TableRules
    from controller.rules.paytable import Paytable
    from controller.wide_events import WideAreaAwarded, WideAreaJoined, WideAreaStatusChanged

    Outcome = tuple[LedgerState, list[AnyEffect]]


def on_wide_area_joined(state: LedgerState, event: WideAreaJoined) -> Outcome:
    """Join central (a manager's signed decision); joining again keeps the chain."""
    if not event.site or not event.central_key or not event.pools:
        raise LedgerError("joining central needs the site's id, central's key and its pools")
    if event.by != CONFIGURATION:  # the configuration's: authorized by the approval carrying it
        state = require(state, event, "link-site")
    chain = state.chain
    if chain is not None and chain.site != event.site:
        raise LedgerError(f"this property is site {chain.site!r} to central, not {event.site!r}")
    if chain is None:
        chain = SiteChain(event.site, event.central_key, dict(event.pools))
    else:
        chain = msgspec.structs.replace(chain, central_key=event.central_key, pools=event.pools)
    return replace(state, chain=chain), []


def wide_paytable(state: LedgerState, pool_id: str | None) -> str | None:
    """The progressive paytable's name if ``pool_id`` is a wide-area pool here, else None."""
    if pool_id is None or state.chain is None:
        return None
    return state.chain.pools.get(pool_id)


def _chain(state: LedgerState) -> SiteChain:
    if state.chain is None:  # pragma: no cover - wide_paytable() said the pool is wide-area
        raise LedgerError("this property is not joined to central")
    return state.chain


def _queue(state: LedgerState, body: SiteBody, at: str) -> tuple[LedgerState, SiteMessageQueued]:
    chain = _chain(state)
    message = next_message(chain.site, chain.seq + 1, chain.head, at, body)
    moved = msgspec.structs.replace(chain, seq=message.site_seq, head=message.digest)
    return replace(state, chain=moved), SiteMessageQueued(message)


def contribute(
    state: LedgerState, pool_id: str, where: tuple[str, str, int], amount: int, at: str
) -> Outcome:
    """A progressive wager on a wide-area pool: the next message of the chain, or refused."""
    chain = _chain(state)
    if not chain.open:
        raise LedgerError(f"wide-area wagers are closed: {chain.reason}")
    table_id, round_id, seat = where
    state, queued = _queue(state, Contribution(pool_id, table_id, round_id, seat, amount), at)
    chain = _chain(state)
    counted = msgspec.structs.replace(
        chain, contributions=chain.contributions + 1, wager_cents=chain.wager_cents + amount
    )
    return replace(state, chain=counted), [queued]


def shadow_pool(pool_id: str, paytable: Paytable) -> Pool:
    """A pool at the paytable's seed, never stored: the property settles a round against it."""
    return Pool.open(pool_id, PoolTerms(paytable.seed_cents, Fraction(0), paytable=paytable.name))


def hold_meter_pays(
    state: LedgerState, rules: TableRules, round_id: str, settlement: Settlement, at: str
) -> tuple[LedgerState, list[Payout], list[AnyEffect]]:
    """Every meter pay of a settled round held for central, its claim queued (module doc)."""
    paid: list[Payout] = []
    effects: list[AnyEffect] = []
    held = [
        payout
        for payout in settlement.payouts
        if payout.kind is PayoutKind.PROGRESSIVE and payout.from_meter_cents
    ]
    for payout in settlement.payouts:
        if payout not in held:
            paid.append(payout)
            continue
        line = payout.line or ""
        table = rules.progressive
        row = next(r for r in table.lines if str(r.line) == line) if table else None
        if row is None or not isinstance(row.pays, MeterPay):  # pragma: no cover - settled so
            raise LedgerError(f"round {round_id}: seat {payout.seat} holds no meter line")
        split = rules.hit_order is HitOrder.SPLIT
        ways = sum(1 for other in held if other.line == line) if split else 1
        cards = tuple(payout.hand.split())
        percent = str(Fraction(row.pays.percent))
        claim = HitClaim(
            payout.pool_id or "", rules.table_id, round_id, payout.seat, line, percent, ways, cards
        )
        state, queued = _queue(state, claim, at)
        chain = _chain(state)
        waiting = HeldClaim(
            payout.payout_id, payout.pool_id or "", rules.table_id, round_id, payout.seat,
            payout.wager_cents, payout.returned_cents,
        )  # fmt: skip
        chain = msgspec.structs.replace(
            chain, hits=chain.hits + 1, held={**chain.held, str(chain.seq): waiting}
        )
        state = replace(state, chain=chain)
        effects.append(queued)
    return state, paid, effects


def on_wide_area_status(state: LedgerState, event: WideAreaStatusChanged) -> Outcome:
    """Open or close the property's wide-area wagers (the link's runtime journals it)."""
    chain = state.chain
    if chain is None:
        raise LedgerError("this property is not joined to central")
    reason = "" if event.open else (event.reason or "closed")
    moved = msgspec.structs.replace(chain, open=event.open, reason=reason)
    return replace(state, chain=moved), [WideAreaStatus(event.open, reason)]


def on_wide_area_awarded(state: LedgerState, event: WideAreaAwarded) -> Outcome:
    """Pay a held hit as central awarded it; refuse an award central did not sign."""
    award = event.award
    chain = state.chain
    if chain is None:
        raise LedgerError("this property is not joined to central")
    if award.site != chain.site:
        raise LedgerError(f"an award for site {award.site!r}, not this property's")
    if not signature_verifies(chain.central_key, award.signature, signed_bytes(award)):
        raise LedgerError(f"award of claim {award.claim_seq}: the signature is not central's")
    held = chain.held.get(str(award.claim_seq))
    if held is None:
        raise LedgerError(f"no hit claim {award.claim_seq} waits for an award")
    if award.amount_cents < 0 or award.pool_id != held.pool_id:
        raise LedgerError(f"award of claim {award.claim_seq}: not for what was claimed")
    rules = state.tables.get(held.table_id)
    if rules is None:
        raise LedgerError(f"award of claim {award.claim_seq}: unknown table {held.table_id!r}")
    fixed = 0
    table = rules.progressive
    for row in table.lines if table else ():
        if str(row.line) == award.line:
            fixed = row.pays.fixed_cents if isinstance(row.pays, MeterPay) else fixed
            fixed = row.pays.cents if isinstance(row.pays, FixedPay) else fixed
    payout = flagged(
        rules,
        Payout(
            held.payout_id, held.seat, Spot.PROGRESSIVE, PayoutKind.PROGRESSIVE, held.wager_cents,
            award.line, win_cents=fixed + award.amount_cents, returned_cents=held.returned_cents,
            from_meter_cents=award.amount_cents, pool_id=held.pool_id,
        ),
    )  # fmt: skip
    left = {key: claim for key, claim in chain.held.items() if key != str(award.claim_seq)}
    state = replace(state, chain=msgspec.structs.replace(chain, held=left))
    if payout.status is PayoutStatus.PENDING:
        state = replace(state, pending={**state.pending, payout.payout_id: payout})
    return state, [payout_effect(held.table_id, held.round_id, payout)]
