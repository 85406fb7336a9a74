"""A mystery level in the ledger: its draws, the feeds that may reach the trigger, and the hit.

A mystery level (docs/paytables.md, "Levels"; docs/rules.md, "Mystery levels: the sealed
trigger") is a level whose terms carry a must-hit-by amount. The ledger never knows its trigger
before the hit; what it holds and checks:

* **The draw** (:func:`on_mystery_drawn`): the journal's :class:`~controller.mystery_events.
  MysteryDrawn` for this journal, this level, the next draw number, the level's range
  ``[seed, must hit by)`` and no draw open. The ledger keeps the statement; its signature is
  the controller key's, checked by ``verify`` with the controller's public key.
* **The feeds** (:func:`fed`): each contribution to the level records the meter before and
  after it. The level keeps the feeds of the *last event* that fed it: the controller asks the
  keeper after each such event, before it takes another, so a trigger reached is reached by
  one of them.
* **The hit** (:func:`on_mystery_revealed`): the reveal must open the open draw's commitment
  with a trigger in range (:func:`controller.mystery.core.reveal_holds`), and one of the last
  feeds must carry the meter from below the trigger to it or past it: that wager wins, the
  first to reach it. The level pays the trigger's whole cents to it (a pay pending a
  supervisor's verification like any jackpot at or above the verification amount); the
  amount past the trigger goes to the next level's meter (``spill_to``) or stays with the
  level as overflow, released onto the reseeded meter; the level reseeds from its reserve
  first, then the house; queued terms apply, as at any won jackpot; and the draw is spent: the
  controller asks the keeper for the next.

A reveal that fails any check is refused, journaled as refused, and moves nothing: the level
stops paying until a person looks (docs/security.md, "Mystery levels: the sealed trigger").
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING

import msgspec

from controller.effects import PastTrigger, fraction_text
from controller.ledger.payout_effects import meter_paid, payout_effect
from controller.ledger.pool import LAST_HITS, Feed, HitRecord, MeterPayment
from controller.ledger.settlement import Payout, PayoutKind, PayoutStatus, flagged
from controller.ledger.state import LedgerError, balances, pool_of, table_of, with_pool
from controller.mystery.core import reveal_holds
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.ledger.pool import Pool
    from controller.ledger.state import LedgerState
    from controller.mystery_events import MysteryDrawn, MysteryRevealed

Outcome = tuple["LedgerState", list["AnyEffect"]]


def fed(pool: Pool, before: Pool, feed: Feed) -> Pool:
    """A mystery level after one contribution: the feed kept with those of the same event."""
    if pool.terms.must_hit_by_cents is None:
        return pool
    same_event = before.fed and before.fed[0].event_id == feed.event_id
    return replace(pool, fed=(*before.fed, feed) if same_event else (feed,))


def on_mystery_drawn(state: LedgerState, event: MysteryDrawn) -> Outcome:
    """The level's next draw, checked against the journal, the level and its range."""
    drawn = event.drawn
    pool = _mystery_pool(state, drawn.pool)
    if state.binding is None or drawn.journal != state.binding.journal:
        journal = state.binding.journal if state.binding is not None else "none"
        raise LedgerError(
            f"pool {pool.pool_id}: the draw is for journal {drawn.journal!r}, not {journal!r}"
        )
    if pool.draw is not None:
        raise LedgerError(f"pool {pool.pool_id}: draw {pool.draw.draw} is open; it hits first")
    if drawn.draw != pool.draws + 1:
        raise LedgerError(
            f"pool {pool.pool_id}: draw {drawn.draw}, where the next is {pool.draws + 1}"
        )
    ceiling = pool.terms.must_hit_by_cents
    if (drawn.floor, drawn.ceiling) != (pool.terms.seed_cents, ceiling):
        raise LedgerError(
            f"pool {pool.pool_id}: a draw in [{drawn.floor}, {drawn.ceiling}), where the "
            f"level's range is [{pool.terms.seed_cents}, {ceiling})"
        )
    if not drawn.commitment or not drawn.signature:
        raise LedgerError(f"pool {pool.pool_id}: a draw carries its commitment and signature")
    sealed = None if isinstance(event.sealed, msgspec.UnsetType) else event.sealed
    if sealed is not None and not (sealed.key_id and sealed.nonce and sealed.sealed):
        raise LedgerError(f"pool {pool.pool_id}: the draw's envelope names its key and holds both")
    return with_pool(state, replace(pool, draw=drawn, draws=drawn.draw, sealed=sealed)), []


def on_mystery_revealed(state: LedgerState, event: MysteryRevealed) -> Outcome:
    """The open draw's trigger revealed: the first feed to reach it wins the level."""
    reveal = event.reveal
    pool = _mystery_pool(state, reveal.pool)
    if pool.draw is None:
        raise LedgerError(f"pool {pool.pool_id}: no draw is open")
    reason = reveal_holds(pool.draw, reveal)
    if reason is not None:
        raise LedgerError(f"pool {pool.pool_id}: {reason}")
    trigger = reveal.trigger
    winner = next((feed for feed in pool.fed if feed.after >= trigger), None)
    # The draw starts from the level's seed exactly: only its first feed may start at a
    # trigger drawn at the floor itself; any other start at or past it was reached before.
    opening = bool(pool.fed) and pool.fed[0].before == pool.draw.floor
    if pool.fed and pool.fed[0].before >= trigger and not opening:
        raise LedgerError(
            f"pool {pool.pool_id}: the trigger {trigger} was reached before the last event "
            f"that fed the level ({feed_text(pool.fed[0])})"
        )
    if winner is None or reveal.hit.exact() != pool.fed[-1].after:
        raise LedgerError(
            f"pool {pool.pool_id}: no contribution of the last event to feed it carried the "
            f"meter to the trigger {trigger}"
        )
    rules = table_of(state, winner.table_id)
    payout_id = f"{event.event_id}/{winner.seat}/mystery"
    hit = HitRecord(payout_id, winner.table_id, winner.seat, f"mystery-{reveal.level}", 0, 0)
    pool, payment, spill = _hit(pool, trigger, hit)
    payout = flagged(
        rules,
        Payout(
            payout_id, winner.seat, Spot.PROGRESSIVE, PayoutKind.PROGRESSIVE, winner.wager_cents,
            f"mystery-{reveal.level}", win_cents=trigger, from_meter_cents=trigger,
            pool_id=pool.pool_id,
        ),
    )  # fmt: skip
    past = payment.meter_before - trigger
    effects: list[AnyEffect] = [meter_paid(pool.pool_id, payment)]
    effects.append(payout_effect(winner.table_id, winner.round_id, payout))
    # The report balances each account by its flows (controller/reports/reconciliation.py):
    # what left the meter past the trigger is one, named where it went.
    effects.append(past_trigger(pool.pool_id, pool.pool_id, -past, past - spill))
    state = with_pool(state, pool)
    if spill:
        following, onto_meter = _spilled_onto(pool_of(state, pool.terms.spill_to), spill)
        state = with_pool(state, following)
        taken = past_trigger(following.pool_id, pool.pool_id, onto_meter, spill - onto_meter)
        effects.append(taken)
        effects.append(balances(following))
    effects.append(balances(pool))
    if payout.status is PayoutStatus.PENDING:
        state = replace(state, pending={**state.pending, payout.payout_id: payout})
    return state, effects


def _hit(pool: Pool, trigger: int, hit: HitRecord) -> tuple[Pool, MeterPayment, Fraction]:
    """The level paid the trigger; the amount past it, and what passes to the next level.

    The meter goes back to exactly its seed (the reserve first, then the house), so that the
    next draw's floor is the meter it starts from; what was past the trigger (with its carried
    fraction of a cent) goes to the next level, or to this level's overflow, never back onto
    the meter the next trigger is measured on.
    """
    before = pool.meter
    past = before - trigger
    spill = past if pool.terms.spill_to else Fraction(0)
    paid = replace(
        pool,
        meter=Fraction(0),
        overflow=pool.overflow + past - spill,
        spilled_out=pool.spilled_out + spill,
        paid_cents=pool.paid_cents + trigger,
        hits_count=pool.hits_count + 1,
        draw=None,
        sealed=None,
        fed=(),
    )
    terms_applied = paid.pending_terms is not None
    if paid.pending_terms is not None:  # the jackpot is won: queued terms take effect
        revision = paid.pending_revision or paid.revision
        paid = replace(
            paid, terms=paid.pending_terms, revision=revision, pending_terms=None,
            pending_revision=None,
        )  # fmt: skip
    reseeded, reseed = paid.reseeded()
    from_reserve = reseeded.reserve_funding_cents - paid.reserve_funding_cents
    recorded = replace(hit, amount_cents=trigger, meter_before_cents=floor(before))
    done = replace(reseeded, last_hits=(recorded, *reseeded.last_hits)[:LAST_HITS])
    payment = MeterPayment(
        paid_cents=trigger,
        meter_before=before,
        reseed_cents=reseed,
        from_reserve_cents=from_reserve,
        from_house_cents=reseed - from_reserve,
        from_overflow=Fraction(0),
        reset=True,
        terms_applied=terms_applied,
        hit_id=hit.hit_id,
        pool_id=pool.pool_id,
    )
    return done, payment, spill


def _spilled_onto(pool: Pool, amount: Fraction) -> tuple[Pool, Fraction]:
    """The next level takes the amount past the trigger: onto its meter, up to its limit.

    The pool, and how much of the amount went onto its meter (the rest to its overflow).
    """
    room = amount
    if pool.terms.limit_cents is not None:
        room = max(Fraction(0), min(amount, pool.terms.limit_cents - pool.meter))
    taken = replace(
        pool,
        meter=pool.meter + room,
        overflow=pool.overflow + amount - room,
        spilled_in=pool.spilled_in + amount,
    )
    return taken, room


def past_trigger(pool_id: str, level: str, meter: Fraction, overflow: Fraction) -> PastTrigger:
    """What one pool's meter and overflow gained (+) or lost (-) past a mystery trigger."""
    return PastTrigger(pool_id, level, fraction_text(meter), fraction_text(overflow))


def _mystery_pool(state: LedgerState, pool_id: str) -> Pool:
    pool = pool_of(state, pool_id)
    if pool.terms.must_hit_by_cents is None:
        raise LedgerError(f"pool {pool_id} is no mystery level")
    return pool


def feed_text(feed: Feed) -> str:
    """A feed in words, for a refusal or a report."""
    return (
        f"table {feed.table_id} round {feed.round_id} seat {feed.seat}: "
        f"{fraction_text(feed.before)} to {fraction_text(feed.after)}"
    )
