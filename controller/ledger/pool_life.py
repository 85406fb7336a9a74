"""A pool's life after it opened: suspended, resumed, transferred, retired (docs/money.md).

Regulators allow a progressive jackpot in play to be stopped, moved or closed only on a
documented decision, never by reducing what the players funded (docs/rules.md, "A pool's
life"). So each step is an operator's signed action with its reason, checked here:

* **Suspend.** A supervisor or manager takes a pool out of play (a malfunction, a table
  removed): one signature, since it protects. Its meters stay exactly as they are; every
  progressive wager on it is refused at lock, with the reason (controller/ledger/rounds.py),
  until a manager resumes it. A pool with progressive wagers locked in a round still in play
  is not suspended: the round is settled or voided first, so that no contribution is left on
  a pool that may not pay it.
* **Resume.** A manager puts a suspended pool back in play. A pool a transfer emptied is
  reseeded by the house, as after a hit.
* **Transfer.** Two managers move a pool's meter, reserve and overflow, exactly (sub-cent parts
  carried), onto another pool whose terms allow it: the same paytable (the same game, wager
  and pays), a progressive wager no larger than the one that funded the money, not retired.
  The source is left suspended with nothing on it. Neither pool may have progressive wagers
  locked in a round in play.
* **Retire.** Two managers close a pool for good, with the disposition of every cent: already
  transferred (it holds nothing), paid in one documented final award (whole cents; the
  sub-cent part recorded as orphaned), or recorded as orphaned, kept for a later pool. A
  retired pool refuses everything: wagers, suspensions, transfers in or out, adjustments,
  terms, tables.
* **Jurisdiction profiles.** Under the profile a signed configuration approval named
  (controller/ledger/jurisdictions.py), a transfer or a retirement names a documented cause the
  profile allows, and a pool is retired only after the profile's minimum life.

The pool's state (:attr:`Pool.status`, :attr:`Pool.status_reason`) is part of its record, so
``jackpotd meters`` and ``jackpotd report`` show it; a pool in play encodes it not at all
(controller/ledger/codec.py), so every journal written before keeps its snapshots' digests.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Final

import msgspec

from controller.effects import PoolDisposed, PoolTransfer, fraction_text
from controller.ledger.authority import DUAL, require
from controller.ledger.binding import moment_of
from controller.ledger.jurisdictions import CAUSES, PROFILES, profile
from controller.ledger.pool_levels import level_name, named_pools, table_pool
from controller.ledger.state import LedgerError, balances, with_pool
from controller.pool_events import (
    DISPOSITIONS,
    FINAL_AWARD,
    TRANSFERRED,
    PoolRetired,
    PoolTransferred,
)

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.ledger.pool import Pool
    from controller.ledger.state import LedgerState
    from controller.pool_events import PoolResumed, PoolSuspended

    Outcome = tuple[LedgerState, list[AnyEffect]]

IN_PLAY: Final = ""
"""A pool's status while it takes wagers (the default, never encoded)."""
SUSPENDED: Final = "suspended"
RETIRED: Final = "retired"


def out_of_play(pool: Pool) -> str | None:
    """Why ``pool`` takes no wager now (suspended or retired, and why), or None if it does."""
    if pool.status == SUSPENDED:
        return f"pool {pool.pool_id} is suspended: {pool.status_reason}"
    if pool.status == RETIRED:
        return f"pool {pool.pool_id} is retired: {pool.status_reason}"
    return None


def _documented(event: PoolSuspended | PoolResumed | PoolTransferred | PoolRetired) -> None:
    if not event.by.strip() or not event.reason.strip():
        raise LedgerError(f"pool {event.pool_id}: it needs who did it and why")


def _wagers_in_play(state: LedgerState, pool_id: str) -> list[str]:
    """The rounds still in play holding a progressive wager that contributed to ``pool_id``."""
    held: list[str] = []
    for (table_id, round_id), wagers in state.rounds.items():
        rules = state.tables.get(table_id)
        if rules is None or rules.pool_id != pool_id:
            continue
        if any(wager.contribution is not None or wager.levels for wager in wagers):
            held.append(f"{table_id}/{round_id}")
    return sorted(held)


def _no_wagers_in_play(state: LedgerState, pool_id: str) -> None:
    """Refuse while a round in play holds a progressive wager on the pool (or any level of it)."""
    if held := _wagers_in_play(state, table_pool(pool_id)):
        raise LedgerError(
            f"pool {pool_id}: progressive wagers are locked in {', '.join(held)}; "
            "settle or void the round first"
        )


def on_pool_suspended(state: LedgerState, event: PoolSuspended) -> Outcome:
    """Take a pool (every level of it) out of play: meters stay, wagers are refused."""
    pools = named_pools(state, event.pool_id)
    _documented(event)
    for pool in pools:
        if (refusal := out_of_play(pool)) is not None:
            raise LedgerError(refusal)
    _no_wagers_in_play(state, event.pool_id)
    state = require(state, event, "suspend-pool")
    for pool in pools:
        state = with_pool(
            state, replace(pool, status=SUSPENDED, status_reason=event.reason.strip())
        )
    return state, []


def on_pool_resumed(state: LedgerState, event: PoolResumed) -> Outcome:
    """Put a suspended pool (every level of it) back in play (a manager's decision)."""
    pools = named_pools(state, event.pool_id)
    _documented(event)
    for pool in pools:
        if pool.status != SUSPENDED:
            raise LedgerError(
                out_of_play(pool) or f"pool {pool.pool_id} is in play: there is nothing to resume"
            )
    state = require(state, event, "resume-pool")
    effects: list[AnyEffect] = []
    for pool in pools:
        resumed, _ = replace(pool, status=IN_PLAY, status_reason="").reseeded()
        state = with_pool(state, resumed)
        effects.append(balances(resumed))
    return state, effects


def _wager_cents(state: LedgerState, pool_id: str) -> int | None:
    """The largest progressive wager a table feeding ``pool_id`` takes; None if none feeds it."""
    wagers = [
        rules.progressive.progressive.wager_cents
        for rules in state.tables.values()
        if rules.pool_id == table_pool(pool_id)
        and rules.progressive is not None
        and rules.progressive.progressive is not None
    ]
    return max(wagers) if wagers else None


def _receivable(state: LedgerState, source: Pool, target: Pool) -> None:
    """Refuse a transfer the receiving pool's terms do not allow (docs/money.md)."""
    if target.status == RETIRED:
        raise LedgerError(f"pool {target.pool_id} is retired: it receives nothing")
    if target.terms.paytable != source.terms.paytable:
        raise LedgerError(
            f"pool {target.pool_id} pays {target.terms.paytable}, not {source.terms.paytable}: "
            "a transfer goes to a pool of the same game and paytable"
        )
    theirs, ours = _wager_cents(state, target.pool_id), _wager_cents(state, source.pool_id)
    if theirs is not None and ours is not None and theirs > ours:
        raise LedgerError(
            f"pool {target.pool_id} takes a progressive wager of {theirs} cents, above the "
            f"{ours} cents that funded pool {source.pool_id}"
        )


def with_jurisdiction(state: LedgerState, name: str, at: str) -> LedgerState:
    """The state under the jurisdiction profile ``name``, from a signed approval at ``at``.

    A pool open already counts its life from now: the ledger cannot prove an earlier opening.
    """
    if profile(name) is None:
        raise LedgerError(
            f"jurisdiction {name!r} is not one of {', '.join(PROFILES)} (docs/rules.md)"
        )
    pools = {
        pool_id: pool if pool.opened_at else replace(pool, opened_at=at)
        for pool_id, pool in state.pools.items()
    }
    return replace(state, pools=pools, authority=replace(state.authority, jurisdiction=name))


def _under_profile(state: LedgerState, event: PoolTransferred | PoolRetired, pool: Pool) -> None:
    """Refuse a transfer or a retirement the approved jurisdiction profile does not allow."""
    name = state.authority.jurisdiction
    cause = "" if isinstance(event.cause, msgspec.UnsetType) else event.cause
    if cause and cause not in CAUSES:
        raise LedgerError(
            f"pool {pool.pool_id}: the cause {cause!r} is not one of {', '.join(CAUSES)}"
        )
    found = None if isinstance(name, msgspec.UnsetType) else profile(name)
    if found is None:
        return
    transfer = isinstance(event, PoolTransferred)
    allowed = found.transfer_causes if transfer else found.retire_causes
    step = "a transfer" if transfer else "a retirement"
    if allowed is not None and cause not in allowed:
        raise LedgerError(
            f"pool {pool.pool_id}: under the {found.name} profile {step} needs a documented "
            f"cause: {', '.join(sorted(allowed))}, not {cause or 'none'}"
        )
    if transfer or not found.min_life_days or not pool.opened_at:
        return
    lived = moment_of(event.at, "the event's time") - moment_of(pool.opened_at, "its opening")
    if lived < timedelta(days=found.min_life_days):
        raise LedgerError(
            f"pool {pool.pool_id}: under the {found.name} profile a pool lives "
            f"{found.min_life_days} days before it is retired; it opened {pool.opened_at}"
        )


def _level_pairs(state: LedgerState, event: PoolTransferred) -> list[tuple[Pool, Pool]]:
    """The pools a transfer moves, level to level: the same levels on both sides.

    A mystery level's meter does not move: its trigger was drawn for its own meter (docs/rules.md
    § 10), and a meter carried onto another level could pass that level's trigger with no wager
    to win it. A pool with one is retired with its disposition instead.
    """
    sources = named_pools(state, event.pool_id)
    named = named_pools(state, event.to_pool)
    if {pool.pool_id for pool in sources} & {pool.pool_id for pool in named}:
        raise LedgerError(f"pool {event.pool_id}: a transfer goes to another pool")
    if event.pool_id in state.pools and event.to_pool in state.pools:  # one pool to one pool
        pairs = [(sources[0], named[0])]
    else:
        targets = {level_name(pool): pool for pool in named}
        names = [level_name(pool) for pool in sources]
        if sorted(names) != sorted(targets):
            raise LedgerError(
                f"pool {event.pool_id} has the levels {', '.join(names) or 'none'} and pool "
                f"{event.to_pool} {', '.join(targets) or 'none'}: a transfer goes level to level"
            )
        pairs = [(source, targets[level_name(source)]) for source in sources]
    for source, target in pairs:
        for pool in (source, target):
            if pool.terms.must_hit_by_cents is not None:
                raise LedgerError(
                    f"pool {pool.pool_id} is a mystery level: its meter is not moved (its "
                    "trigger was drawn for it); retire the pool with a disposition instead"
                )
    return pairs


def on_pool_transferred(state: LedgerState, event: PoolTransferred) -> Outcome:
    """Move a pool's meter, reserve and overflow onto another, exactly, under dual control.

    The source is left suspended with nothing on it; the receiving pool takes the meter onto
    its meter as far as its limit allows (the rest onto its overflow, released at its next
    reset as any overflow), the reserve onto its reserve and the overflow onto its overflow.
    Each pool's identity holds with what the transfer took out or brought in, and so does
    their sum, which the transfer leaves as it was. A multi-level pool named by its own id moves
    level to level, onto a pool with the same levels.
    """
    _documented(event)
    pairs = _level_pairs(state, event)
    for source, target in pairs:
        if source.status == RETIRED:
            raise LedgerError(out_of_play(source) or "")
        _receivable(state, source, target)
        _under_profile(state, event, source)
    for pool_id in (event.pool_id, event.to_pool):
        _no_wagers_in_play(state, pool_id)
    state = require(state, event, "transfer-pool", signers=DUAL)
    effects: list[AnyEffect] = []
    for source, target in pairs:
        state, moved = _transferred(state, source, target, event.reason.strip())
        effects += moved
    return state, effects


def _transferred(state: LedgerState, source: Pool, target: Pool, why: str) -> Outcome:
    """One pool's (or level's) money moved onto another: the source left suspended, empty."""
    emptied, meter, reserve, overflow = source.transfer_out()
    reason = f"transferred to {target.pool_id}: {why}"
    emptied = replace(emptied, status=SUSPENDED, status_reason=reason)
    received, to_overflow = target.receive(meter, reserve, overflow)
    state = with_pool(with_pool(state, emptied), received)
    gone = PoolTransfer(
        source.pool_id, target.pool_id, fraction_text(-meter), fraction_text(-reserve),
        fraction_text(-overflow),
    )  # fmt: skip
    came = PoolTransfer(
        target.pool_id, source.pool_id, fraction_text(meter - to_overflow),
        fraction_text(reserve), fraction_text(overflow + to_overflow),
    )  # fmt: skip
    return state, [gone, balances(emptied), came, balances(received)]


def refuse_retired(pool: Pool) -> None:
    """Refuse any change to a retired pool (an adjustment, new terms, a table feeding it)."""
    if pool.status == RETIRED:
        raise LedgerError(f"pool {pool.pool_id} is retired: {pool.status_reason}")


def on_pool_retired(state: LedgerState, event: PoolRetired) -> Outcome:
    """Close a pool (every level of it) for good with the disposition of every cent.

    Under dual control. ``transferred``: a transfer took everything (the pool holds nothing);
    ``final-award``: it is paid in one documented final award, in whole cents (a level's each),
    the sub-cent part recorded as orphaned; ``orphaned``: all of it is recorded as orphaned,
    kept for a later pool.
    """
    pools = named_pools(state, event.pool_id)
    _documented(event)
    for pool in pools:
        refuse_retired(pool)
    if event.disposition not in DISPOSITIONS:
        raise LedgerError(
            f"pool {event.pool_id}: the disposition {event.disposition!r} is not one of "
            f"{', '.join(DISPOSITIONS)}"
        )
    _no_wagers_in_play(state, event.pool_id)
    for pool in pools:
        holding = pool.meter + pool.reserve + pool.overflow
        if event.disposition == TRANSFERRED and holding:
            raise LedgerError(
                f"pool {pool.pool_id} holds {fraction_text(holding)} cents: transfer them first"
            )
    if event.disposition == FINAL_AWARD and not event.award.strip():
        raise LedgerError(f"pool {event.pool_id}: a final award is documented (who, how paid)")
    for pool in pools:
        _under_profile(state, event, pool)
    state = require(state, event, "retire-pool", signers=DUAL)
    effects: list[AnyEffect] = []
    for pool in pools:
        state, disposed = _retired(state, pool, event)
        effects += disposed
    return state, effects


def _retired(state: LedgerState, pool: Pool, event: PoolRetired) -> Outcome:
    """One pool (or level) closed with its disposition."""
    award = event.disposition == FINAL_AWARD
    disposed, (meter, reserve, overflow), paid = pool.dispose(award=award)
    why = event.award.strip() if award else event.reason.strip()
    retired = replace(disposed, status=RETIRED, status_reason=f"{event.disposition}: {why}")
    effect = PoolDisposed(
        pool.pool_id, event.disposition, fraction_text(-meter), fraction_text(-reserve),
        fraction_text(-overflow), paid, fraction_text(retired.orphaned - pool.orphaned),
    )  # fmt: skip
    return with_pool(state, retired), [effect, balances(retired)]
