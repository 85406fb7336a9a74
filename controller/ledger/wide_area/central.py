"""Central's side of the wide-area link in the ledger: linked properties, their messages, awards.

docs/wide-area.md. Central owns the wide-area pools; a property feeds them through its chained
messages, and only central awards their hits, here, where its sequencer journals the claim:

* :class:`SiteLinked` (a manager's signed decision) links a property: its controller's public
  key, the pools its tables may feed, and the progressive paytables of those pools (their text,
  as tables carry theirs, so that a replay never reads a file);
* :class:`SiteReported` applies the property's next message exactly once
  (:mod:`controller.widearea.site_link` judges it). A contribution goes into the pool as a local
  table's does (its table named ``<site>/<table>``); a hit claim is evaluated here, from the
  seat's seven cards against the pool's paytable at the meter as it now stands, and paid from
  the meter (:class:`AwardMade`). A message the property signed that breaks its chain, whose
  digest or body cannot be right, or whose claim the cards do not make, halts the link
  (:class:`SiteRefused`): the property is at fault, and nothing more from it is applied until
  a manager acts. One whose signature is not the property's is refused (journaled) and moves
  nothing, and the link goes on: it is someone else's doing;
* :class:`SiteTotalsReported` reconciles the property's totals with what central applied
  (:class:`SiteReconciled`);
* :class:`SiteResumed` (a manager's signed decision) resumes a halted link
  (:class:`SiteLinkResumed`): central expects the message after its head again.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING

import msgspec

from controller.effects import AnyEffect, Contributed, fraction_text
from controller.errors import RefusedError
from controller.ledger.authority import CONFIGURATION, require
from controller.ledger.payout_effects import meter_paid
from controller.ledger.pool import HitRecord, PoolError
from controller.ledger.state import LedgerError, LedgerState, balances, pool_of, with_pool
from controller.ledger.wide_area.sites import AwardOwed, LinkedSite
from controller.rules.cards import CardError, HandError, SevenCardHand
from controller.rules.paytable import MeterPay
from controller.rules.paytable_files import parse_paytable
from controller.rules.qualify import qualifier
from controller.security.controller_key import key_id, signature_verifies
from controller.wide_effects import (
    AwardMade,
    SiteAdvanced,
    SiteLinkResumed,
    SiteReconciled,
    SiteRefused,
    SiteSet,
)
from controller.widearea.messages import Contribution, HitClaim, SiteMessage, totals_bytes
from controller.widearea.site_link import (
    HALTED,
    Apply,
    Duplicate,
    Gap,
    Matched,
    Mismatched,
    Pending,
    Refused,
    SiteLink,
    Stale,
    advanced,
    halt,
    judge,
    reconcile,
    reconciled,
    resume,
)

if TYPE_CHECKING:
    from controller.ledger.pool import Pool
    from controller.rules.paytable import Paytable
    from controller.wide_events import SiteLinked, SiteReported, SiteResumed, SiteTotalsReported

    Outcome = tuple[LedgerState, list[AnyEffect]]

FORGED = "forged"
"""A message whose signature does not verify under the property's key (the link goes on)."""
NOT_FED = "pool-not-fed"
"""A message for a pool the property's link does not name."""
NOT_A_HIT = "not-a-hit"
"""A hit claim whose cards make no meter line of the pool's paytable."""


def _with_site(state: LedgerState, site: str, linked: LinkedSite) -> LedgerState:
    return replace(state, sites={**state.sites, site: linked})


def on_site_linked(state: LedgerState, event: SiteLinked) -> Outcome:
    """Link a property (a manager's signed decision); linking again changes key and pools."""
    if not event.site or not event.pools:
        raise LedgerError("a linked property needs its id and the pools it feeds")
    if event.by != CONFIGURATION:  # the configuration's: authorized by the approval carrying it
        state = require(state, event, "link-site")
    paytables: dict[str, str] = {}
    for pool_id in event.pools:
        pool = pool_of(state, pool_id)
        paytables[pool_id] = _paytable_text(state, pool)
    known = state.sites.get(event.site)
    link = known.link if known is not None else SiteLink(event.site)
    linked = LinkedSite(event.public_key, tuple(event.pools), paytables, link)
    effect = SiteSet(event.site, key_id(event.public_key), list(event.pools))
    return _with_site(state, event.site, linked), [effect]


def on_site_resumed(state: LedgerState, event: SiteResumed) -> Outcome:
    """Resume a halted link (a manager's signed decision, once its cause is settled)."""
    if not event.reason:
        raise LedgerError("resuming a link says why (what settled its halt)")
    state = require(state, event, "link-site")
    linked = state.sites.get(event.site)
    if linked is None:
        raise LedgerError(f"no linked property {event.site!r}")
    link = linked.link
    if not link.halted:
        raise LedgerError(f"{event.site}: the link is not halted")
    effect = SiteLinkResumed(event.site, link.through, link.halted)
    return _with_site(state, event.site, replace_link(linked, resume(link))), [effect]


def _paytable_text(state: LedgerState, pool: Pool) -> str:
    """The text of the pool's progressive paytable, as a table playing it was configured."""
    for table_event in state.table_events.values():
        text = table_event.paytables.get(pool.terms.paytable)
        if text is not None:
            return text
    raise LedgerError(
        f"pool {pool.pool_id}: no table here carries its paytable {pool.terms.paytable!r}; "
        "configure one (it may be closed) before linking a property to the pool"
    )


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> Paytable:
    return parse_paytable(text, "a linked property's pool")


def on_site_reported(state: LedgerState, event: SiteReported) -> Outcome:
    """Apply the property's next message once; refuse and halt on a forgery or a break."""
    message = event.message
    linked = state.sites.get(message.site)
    if linked is None:
        raise LedgerError(f"no linked property {message.site!r}")
    if not signature_verifies(linked.public_key, message.signature, message.digest.encode()):
        # Not the property's doing: refused, and the link goes on (anyone who can publish on
        # the property's topic could otherwise stop its wide-area play with one message).
        refused = SiteRefused(message.site, message.site_seq, FORGED, "not the property's key")
        return state, [refused]
    verdict = judge(linked.link, message)
    match verdict:
        case Duplicate():
            raise LedgerError(f"{message.site} message {message.site_seq} is already applied")
        case Gap():
            raise LedgerError(
                f"{message.site} message {message.site_seq} comes after a gap "
                f"(applied through {linked.link.through})"
            )
        case Refused() if verdict.reason == HALTED:
            raise LedgerError(f"{message.site}: the link is halted ({linked.link.halted})")
        case Refused():
            return _halted(state, linked, message, verdict.reason, verdict.detail)
        case Apply():
            pass
    if message.body.pool_id not in linked.pools:
        detail = f"pool {message.body.pool_id!r} is not one this property feeds"
        return _halted(state, linked, message, NOT_FED, detail)
    try:
        state, effects = _applied(state, linked, message)
    except _NotAHitError as error:
        return _halted(state, linked, message, NOT_A_HIT, str(error))
    linked = state.sites[message.site]
    owed = {
        str(award.claim_seq): AwardOwed(
            award.claim_seq, award.hit_id, award.pool_id, award.line, award.amount_cents
        )
        for award in effects
        if isinstance(award, AwardMade)
    }
    if owed:
        linked = msgspec.structs.replace(linked, awards={**linked.awards, **owed})
    moved = replace_link(linked, advanced(linked.link, message))
    advance = SiteAdvanced(message.site, message.site_seq, message.digest)
    return _with_site(state, message.site, moved), [advance, *effects]


def replace_link(linked: LinkedSite, link: SiteLink) -> LinkedSite:
    """The linked property with its chain moved on."""
    return msgspec.structs.replace(linked, link=link)


def _halted(
    state: LedgerState, linked: LinkedSite, message: SiteMessage, reason: str, detail: str
) -> Outcome:
    halted = replace_link(linked, halt(linked.link, f"{reason}: {detail}"))
    refused = SiteRefused(message.site, message.site_seq, reason, detail)
    return _with_site(state, message.site, halted), [refused]


class _NotAHitError(RefusedError, ValueError):
    """The claim's cards make no meter line."""


def _applied(state: LedgerState, linked: LinkedSite, message: SiteMessage) -> Outcome:
    body = message.body
    pool = pool_of(state, body.pool_id)
    table_id = f"{message.site}/{body.table_id}"
    match body:
        case Contribution():
            try:
                pool, share = pool.contribute(body.wager_cents)
            except PoolError as error:
                raise LedgerError(f"pool {pool.pool_id}: {error}") from error
            contributed = Contributed(
                pool.pool_id, table_id, body.round_id, body.seat, body.wager_cents,
                fraction_text(share.to_meter), fraction_text(share.to_reserve),
                fraction_text(share.to_overflow),
            )  # fmt: skip
            return with_pool(state, pool), [contributed, balances(pool)]
        case HitClaim():
            return _award(state, linked, message, body, pool)


def _award(
    state: LedgerState, linked: LinkedSite, message: SiteMessage, claim: HitClaim, pool: Pool
) -> Outcome:
    table = _parsed(linked.paytables[claim.pool_id])
    try:
        hand = SevenCardHand.parse(claim.cards)
    except (CardError, HandError) as error:
        raise _NotAHitError(f"the cards {list(claim.cards)}: {error}") from error
    mask = qualifier(table.joker)(hand.indices)
    row = table.line_for(mask, pool.meter)
    if row is None or not any(isinstance(r.pays, MeterPay) for r in table.qualifying_rows(mask)):
        raise _NotAHitError(f"the cards {list(claim.cards)} make no meter line of {table.name}")
    hit_id = f"site/{message.site}/{message.site_seq}"
    if not isinstance(row.pays, MeterPay):  # a fixed pay beats the meter line at this meter
        award = AwardMade(
            message.site, message.site_seq, hit_id, pool.pool_id, claim.table_id,
            claim.round_id, claim.seat, str(row.line), 0,
        )  # fmt: skip
        return state, [award]
    record = HitRecord(hit_id, f"{message.site}/{claim.table_id}", claim.seat, str(row.line), 0, 0)
    try:
        pool, payment = pool.pay(row.pays.percent, record, ways=claim.ways)
    except PoolError as error:
        raise LedgerError(f"pool {pool.pool_id}: {error}") from error
    amount = payment.paid_cents // claim.ways
    award = AwardMade(
        message.site, message.site_seq, hit_id, pool.pool_id, claim.table_id, claim.round_id,
        claim.seat, str(row.line), amount,
    )  # fmt: skip
    return with_pool(state, pool), [meter_paid(pool.pool_id, payment), award, balances(pool)]


def on_site_totals(state: LedgerState, event: SiteTotalsReported) -> Outcome:
    """Reconcile the property's totals once central has applied everything they cover."""
    totals = event.totals
    linked = state.sites.get(totals.site)
    if linked is None:
        raise LedgerError(f"no linked property {totals.site!r}")
    if not signature_verifies(linked.public_key, totals.signature, totals_bytes(totals)):
        raise LedgerError(f"{totals.site}: the totals' signature is not the property's")
    outcome = reconcile(linked.link, totals)
    match outcome:
        case Pending():
            raise LedgerError(
                f"{totals.site}: totals through {totals.through}, applied through "
                f"{linked.link.through}: the rest comes first"
            )
        case Stale():
            raise LedgerError(f"{totals.site}: totals through {totals.through} are older")
        case Matched():
            # The claims it no longer holds have their awards journaled there: not owed.
            kept = {
                key: owed
                for key, owed in linked.awards.items()
                if owed.claim_seq > totals.through or owed.claim_seq in totals.held
            }
            linked = msgspec.structs.replace(linked, awards=kept)
            moved = replace_link(linked, reconciled(linked.link, outcome))
            effect = SiteReconciled(totals.site, totals.through, matched=True, problems=[])
            return _with_site(state, totals.site, moved), [effect]
        case Mismatched():
            problems = list(outcome.problems)
            halted = replace_link(linked, halt(linked.link, "reconciliation: " + problems[0]))
            effect = SiteReconciled(totals.site, totals.through, matched=False, problems=problems)
            return _with_site(state, totals.site, halted), [effect]
