"""The ledger: the single owner of every pool, applying one event at a time, deterministically.

:func:`apply` takes the state and an event and returns the new state and the event's effects;
it never reads a clock, a file or a socket, so replaying the journal rebuilds the same state to
the cent. An event the ledger must refuse (an unknown table, a wager outside the paytable's
denomination or its spot's limits, a round whose cards do not add up, a meter change without
reason, a void by a device of a round held for a supervisor) raises
:class:`LedgerError` and changes nothing; the journal records the refusal.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import assert_never

import msgspec

from controller.agent_events import TableAgentEnrolled, TableAgentRevoked
from controller.effects import (
    Adjusted,
    AnyEffect,
    PoolOpenedEffect,
    TableSet,
    TermsChanged,
    Verified,
)
from controller.events import (
    AnyEvent,
    AuthenticationFailed,
    BetSensed,
    BetsLocked,
    CardDealt,
    CheckpointRecorded,
    ConfigurationApproved,
    DealComplete,
    FaultRecorded,
    FaultsAcknowledged,
    HistoryRestored,
    HitVerified,
    JournalIdentified,
    ManifestApproved,
    MeterAdjusted,
    OperatorEnrolled,
    OperatorRevoked,
    OperatorUnlocked,
    PasskeyCloneSuspected,
    PasskeyEnrolled,
    PasskeyRevoked,
    PoolOpened,
    PoolTermsChanged,
    RoundSettled,
    RoundVoided,
    SequencerTookOver,
    TableConfigured,
    TableStatusChanged,
    WagerLocked,
)
from controller.ledger.authority import CONFIGURATION, DUAL, require
from controller.ledger.faults import acknowledge_faults, on_fault
from controller.ledger.identity import on_journal_identified
from controller.ledger.levels import levels_of
from controller.ledger.mystery_level import on_mystery_drawn, on_mystery_revealed
from controller.ledger.operator_events import (
    approve_configuration,
    approve_manifest,
    authentication_failed,
    enroll,
    revoke,
    unlock,
)
from controller.ledger.passkey_events import enroll_passkey, revoke_passkey
from controller.ledger.passkeys import on_clone_suspected
from controller.ledger.pool import Pool, PoolError, PoolTerms
from controller.ledger.pool_life import (
    on_pool_resumed,
    on_pool_retired,
    on_pool_suspended,
    on_pool_transferred,
    refuse_retired,
)
from controller.ledger.restores import on_history_restored
from controller.ledger.rounds import (
    Outcome,
    on_bet_sensed,
    on_bets_locked,
    on_card_dealt,
    on_deal_complete,
    on_round_settled,
    on_table_status,
    on_wager_locked,
)
from controller.ledger.state import (
    LedgerError,
    LedgerState,
    balances,
    pool_of,
    with_pool,
)
from controller.ledger.table_agents import check_agent_word, enroll_agent, revoke_agent
from controller.ledger.table_rules import TableRulesError, refuse_envy_on_the_dealer, table_rules
from controller.ledger.table_state import TableState
from controller.ledger.voids import on_round_voided
from controller.ledger.wide_area.central import (
    on_site_linked,
    on_site_reported,
    on_site_resumed,
    on_site_totals,
)
from controller.ledger.wide_area.property import (
    on_wide_area_awarded,
    on_wide_area_joined,
    on_wide_area_status,
    wide_paytable,
)
from controller.mystery_events import MysteryDrawn, MysteryRevealed
from controller.pool_events import PoolResumed, PoolRetired, PoolSuspended, PoolTransferred
from controller.wide_events import (
    SiteLinked,
    SiteReported,
    SiteResumed,
    SiteTotalsReported,
    WideAreaAwarded,
    WideAreaJoined,
    WideAreaStatusChanged,
)

__all__ = ["CONFIGURATION", "LedgerError", "LedgerState", "apply"]


def _terms(event: PoolOpened | PoolTermsChanged) -> PoolTerms:
    ceiling = event.must_hit_by_cents if isinstance(event.must_hit_by_cents, int) else None
    try:
        return PoolTerms(
            seed_cents=event.seed_cents,
            rate_of_progression=Fraction(event.rate_of_progression),
            reserve_rate=Fraction(event.reserve_rate),
            limit_cents=event.limit_cents,
            paytable=event.paytable,
            must_hit_by_cents=ceiling,
            spill_to="" if isinstance(event.spill_to, msgspec.UnsetType) else event.spill_to,
        )
    except PoolError as error:
        raise LedgerError(f"pool {event.pool_id}: {error}") from error


def _open_pool(state: LedgerState, event: PoolOpened) -> Outcome:
    if event.pool_id in state.pools:
        raise LedgerError(f"pool {event.pool_id!r} is already open")
    revision = state.revision + 1
    pool = Pool.open(event.pool_id, _terms(event), revision)
    if not isinstance(state.authority.jurisdiction, msgspec.UnsetType):
        pool = replace(pool, opened_at=event.at)  # its life, counted under the profile
    state = replace(with_pool(state, pool), revision=revision)
    return state, [PoolOpenedEffect(pool.pool_id, revision, event.seed_cents), balances(pool)]


def _change_terms(state: LedgerState, event: PoolTermsChanged) -> Outcome:
    pool = pool_of(state, event.pool_id)
    if not event.by or not event.reason:
        raise LedgerError("a change of terms needs who made it and why")
    refuse_retired(pool)
    if event.by != CONFIGURATION:
        state = require(state, event, "change-terms")
    revision = state.revision + 1
    try:
        changed = pool.change_terms(_terms(event), revision, now=event.apply_now)
    except PoolError as error:
        raise LedgerError(f"pool {event.pool_id}: {error}") from error
    reseed = changed.house_funding_cents + changed.reserve_funding_cents
    reseed -= pool.house_funding_cents + pool.reserve_funding_cents
    state = replace(with_pool(state, changed), revision=revision)
    effect = TermsChanged(pool.pool_id, revision, event.apply_now, reseed)
    return state, [effect, balances(changed)]


def _configure_table(state: LedgerState, event: TableConfigured) -> Outcome:
    try:
        rules = table_rules(event)
    except TableRulesError as error:
        raise LedgerError(str(error)) from error
    refuse_envy_on_the_dealer(state, event)
    wide = wide_paytable(state, rules.pool_id)
    if wide is not None and rules.progressive is not None and rules.progressive.name != wide:
        raise LedgerError(
            f"table {event.table_id}: wide-area pool {rules.pool_id} pays {wide}, "
            f"not {rules.progressive.name}"
        )
    if wide is not None and rules.progressive is not None and rules.progressive.levels:
        raise LedgerError(f"table {event.table_id}: a wide-area pool runs one level")
    if rules.pool_id is not None and wide is None:
        paytable = rules.progressive
        found = [pool_of(state, rules.pool_id)] if paytable is None else []
        if paytable is not None:  # a multi-level pool's levels, each a pool of its own
            found = list(levels_of(state, rules.pool_id, paytable).values())
        for pool in found:
            refuse_retired(pool)
            if paytable is not None and paytable.name != pool.terms.paytable:
                raise LedgerError(
                    f"table {event.table_id}: pool {pool.pool_id} pays {pool.terms.paytable}, "
                    f"not {paytable.name}"
                )
    live_table = state.table_states.get(event.table_id)
    in_play = any(table_id == event.table_id for table_id, _ in state.rounds)
    if in_play or (live_table is not None and live_table.round_id is not None):
        raise LedgerError(f"table {event.table_id}: a round is in play; reconfigure between rounds")
    revision = state.revision + 1
    live = state.table_states.get(event.table_id) or TableState(event.table_id)
    state = replace(
        state,
        tables={**state.tables, event.table_id: rules},
        table_events={**state.table_events, event.table_id: event},
        table_states={**state.table_states, event.table_id: live},
        revision=revision,
    )
    return state, [TableSet(event.table_id, revision)]


def _verify_hit(state: LedgerState, event: HitVerified) -> Outcome:
    if event.payout_id not in state.pending:
        raise LedgerError(f"no pending payout {event.payout_id!r}")
    if not event.by:
        raise LedgerError("a verification needs the supervisor's name")
    dual = state.authority.dual_control_cents
    payout = state.pending[event.payout_id]
    signers = DUAL if dual is not None and payout.win_cents >= dual else 1
    state = require(state, event, "verify-hit", signers=signers)
    pending = {k: v for k, v in state.pending.items() if k != event.payout_id}
    return replace(state, pending=pending), [Verified(event.payout_id, event.by)]


def _adjust(state: LedgerState, event: MeterAdjusted) -> Outcome:
    pool = pool_of(state, event.pool_id)
    if not event.by or not event.reason.strip():
        raise LedgerError("an adjustment needs who made it and why")
    refuse_retired(pool)
    state = require(state, event, "adjust", signers=DUAL)
    try:
        adjusted = pool.adjust(event.account, event.amount_cents)
    except PoolError as error:
        raise LedgerError(f"pool {event.pool_id}: {error}") from error
    effects: list[AnyEffect] = [
        Adjusted(pool.pool_id, event.account, event.amount_cents),
        balances(adjusted),
    ]
    return with_pool(state, adjusted), effects


def _outside_approval(state: LedgerState, event: AnyEvent) -> LedgerState:
    """Refuse a configuration change on its own once authority is signed (see below)."""
    if state.authority.signed:
        raise LedgerError(
            f"{type(event).__struct_config__.tag}: a configuration change takes effect only "
            "inside a manager's signed configuration approval"
        )
    return state


def _if_configured(
    state: LedgerState, event: PoolTermsChanged | SiteLinked | WideAreaJoined
) -> LedgerState:
    """A change "by config" is the configuration's: refused on its own once authority is signed.

    A manager's own change of the same kind carries their signature instead (its handler
    requires it).
    """
    return _outside_approval(state, event) if event.by == CONFIGURATION else state


def _configuration_change(
    state: LedgerState,
    change: PoolOpened | PoolTermsChanged | TableConfigured | SiteLinked | WideAreaJoined,
) -> Outcome:
    """One change of an approved configuration (controller.ledger.operator_events)."""
    match change:
        case PoolOpened():
            return _open_pool(state, change)
        case PoolTermsChanged():
            return _change_terms(state, change)
        case TableConfigured():
            return _configure_table(state, change)
        case SiteLinked():
            return on_site_linked(state, change)
        case WideAreaJoined():
            return on_wide_area_joined(state, change)


def _dispatch(state: LedgerState, event: AnyEvent) -> Outcome:  # noqa: PLR0912 - one per kind
    match event:
        case PoolOpened():
            return _open_pool(_outside_approval(state, event), event)
        case PoolTermsChanged():
            return _change_terms(_if_configured(state, event), event)
        case TableConfigured():
            return _configure_table(_outside_approval(state, event), event)
        case WagerLocked():
            return on_wager_locked(state, event)
        case RoundSettled():
            return on_round_settled(state, event)
        case BetSensed():
            return on_bet_sensed(state, event)
        case BetsLocked():
            return on_bets_locked(state, event)
        case CardDealt():
            return on_card_dealt(state, event)
        case DealComplete():
            return on_deal_complete(state, event)
        case RoundVoided():
            return on_round_voided(state, event)
        case TableStatusChanged():
            return on_table_status(state, event)
        case HitVerified():
            return _verify_hit(state, event)
        case MeterAdjusted():
            return _adjust(state, event)
        case OperatorEnrolled():
            return enroll(state, event)
        case OperatorRevoked():
            return revoke(state, event)
        case OperatorUnlocked():
            return unlock(state, event)
        case AuthenticationFailed():
            return authentication_failed(state, event)
        case ManifestApproved():
            return approve_manifest(state, event)
        case ConfigurationApproved():
            return approve_configuration(state, event, _configuration_change)
        case SiteLinked():
            return on_site_linked(_if_configured(state, event), event)
        case SiteReported():
            return on_site_reported(state, event)
        case SiteResumed():
            return on_site_resumed(state, event)
        case SiteTotalsReported():
            return on_site_totals(state, event)
        case WideAreaJoined():
            return on_wide_area_joined(_if_configured(state, event), event)
        case WideAreaStatusChanged():
            return on_wide_area_status(state, event)
        case WideAreaAwarded():
            return on_wide_area_awarded(state, event)
        case HistoryRestored():
            return on_history_restored(state, event)
        case JournalIdentified():
            return on_journal_identified(state, event)
        case TableAgentEnrolled():
            return enroll_agent(state, event)
        case TableAgentRevoked():
            return revoke_agent(state, event)
        case PasskeyEnrolled():
            return enroll_passkey(state, event)
        case PasskeyRevoked():
            return revoke_passkey(state, event)
        case PasskeyCloneSuspected():
            return on_clone_suspected(state, event)
        case PoolSuspended():
            return on_pool_suspended(state, event)
        case PoolResumed():
            return on_pool_resumed(state, event)
        case PoolTransferred():
            return on_pool_transferred(state, event)
        case PoolRetired():
            return on_pool_retired(state, event)
        case FaultRecorded():
            return on_fault(state, event)
        case MysteryDrawn():
            return on_mystery_drawn(state, event)
        case MysteryRevealed():
            return on_mystery_revealed(state, event)
        case FaultsAcknowledged():
            return acknowledge_faults(state, event)
        case CheckpointRecorded() | SequencerTookOver():
            return state, []
        case _:
            assert_never(event)


def apply(state: LedgerState, event: AnyEvent) -> tuple[LedgerState, tuple[AnyEffect, ...]]:
    """Apply one event; raise :class:`LedgerError` (state unchanged) if it must be refused."""
    check_agent_word(state, event)  # an enrolled table's devices speak through its agent
    new_state, effects = _dispatch(state, event)
    return new_state, tuple(effects)
