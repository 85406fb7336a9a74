"""A property's ledger on a wide-area link: its chain, its closed wagers, its held hits.

controller/ledger/wide_area/property.py; docs/wide-area.md. Michigan R 432.1841: play on the
link is suspended while central is not heard, and central alone awards a wide-area hit; a hit
at the property is held, not awarded locally, and paid as central awards it. The last test
runs both ledgers, the property's and central's, end to end over the messages the property
journals, with real keys.
"""

from __future__ import annotations

import msgspec
import pytest
from support.journal.journal_rig import (
    AT,
    DEALER,
    NOTHING,
    POOL,
    STRAIGHT_FLUSH,
    pool_opened,
    settle,
    table_configured,
    wager,
)

from controller.effects import AnyEffect, PayoutMade
from controller.events import RoundVoided
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.wide_area.sites import NEVER_HEARD
from controller.outputs import MeterUpdate, PoolUpdate
from controller.ports import APPLIED, Receipt
from controller.runtime.updates import standing_updates, updates_of
from controller.security.controller_key import ControllerKey
from controller.wide_effects import AwardMade, SiteAdvanced, SiteMessageQueued, WideAreaStatus
from controller.wide_events import (
    SiteLinked,
    SiteReported,
    WideAreaAwarded,
    WideAreaJoined,
    WideAreaStatusChanged,
    award_event_id,
    site_event_id,
)
from controller.widearea.messages import (
    GENESIS,
    Award,
    Contribution,
    HitClaim,
    SiteMessage,
    digest_holds,
    signed_bytes,
)

SITE = "atlantic"
CENTRAL = ControllerKey.generate()


def joined(*, open_link: bool = True) -> LedgerState:
    """A property joined to central, its table playing central's pool, the link open."""
    state = LedgerState()
    join = WideAreaJoined("join-1", AT, SITE, CENTRAL.public_key, {POOL: "progressive-1"}, "mgr")
    for event in (join, table_configured()):
        state, _ = apply(state, event)
    if open_link:
        state, _ = apply(state, WideAreaStatusChanged("open-1", AT, open=True))
    return state


def queued(effects: tuple[AnyEffect, ...]) -> list[SiteMessage]:
    return [effect.message for effect in effects if isinstance(effect, SiteMessageQueued)]


def test_a_wager_on_a_wide_area_pool_becomes_the_next_link_of_the_chain_and_moves_no_meter() -> (
    None
):
    state = joined()
    messages: list[SiteMessage] = []
    for n in (1, 2, 3):
        state, effects = apply(state, wager(f"w{n}", f"r{n}", 1))
        messages += queued(effects)
    assert [m.site_seq for m in messages] == [1, 2, 3]
    assert [m.prev for m in messages] == [GENESIS, messages[0].digest, messages[1].digest]
    assert all(digest_holds(m) for m in messages)
    assert messages[0].body == Contribution(POOL, "T1", "r1", 1, 100)
    assert state.pools == {}  # the property owns no meter of central's pool
    chain = state.chain
    assert chain is not None
    assert (chain.seq, chain.head, chain.contributions, chain.wager_cents) == (
        3, messages[-1].digest, 3, 300,
    )  # fmt: skip


def test_michigan_432_1841_wide_area_wagers_are_refused_while_central_is_not_heard() -> None:
    state = joined(open_link=False)
    with pytest.raises(LedgerError, match="wide-area wagers are closed: never heard from central"):
        apply(state, wager("w1", "r1", 1))
    state, effects = apply(state, WideAreaStatusChanged("open", AT, open=True))
    assert effects == (WideAreaStatus(open=True, reason=""),)
    state, _ = apply(state, wager("w1", "r1", 1))
    closed = WideAreaStatusChanged("close", AT, open=False, reason="central not heard for 60 s")
    state, _ = apply(state, closed)
    with pytest.raises(LedgerError, match="central not heard for 60 s"):
        apply(state, wager("w2", "r2", 1))


def test_a_hit_at_the_property_is_held_and_claimed_never_awarded_locally() -> None:
    state = joined()
    state, _ = apply(state, wager("w1", "r1", 1))
    state, _ = apply(state, wager("w2", "r1", 2))
    # The link goes down before the round settles: the hit is held all the same.
    state, _ = apply(state, WideAreaStatusChanged("close", AT, open=False, reason="cut"))
    state, effects = apply(state, settle("s1", "r1", {1: STRAIGHT_FLUSH, 2: NOTHING}))
    paid = {e.seat: e for e in effects if isinstance(e, PayoutMade)}
    assert 1 not in paid  # seat 1's progressive pay waits for central
    assert paid[2].kind == "loss"
    (claim,) = queued(effects)
    assert isinstance(claim.body, HitClaim)
    assert claim.body.cards == tuple(STRAIGHT_FLUSH)
    assert (claim.body.seat, claim.body.percent, claim.body.ways) == (1, "1", 1)
    assert claim.site_seq == 3
    chain = state.chain
    assert chain is not None
    assert list(chain.held) == ["3"]
    assert chain.hits == 1
    assert state.pending == {}


def _award(claim_seq: int, amount: int, *, key: ControllerKey = CENTRAL) -> Award:
    """Central's award of claim ``claim_seq``, signed (by ``key`` instead, to forge one)."""
    line = "seven-card-straight-flush"
    award = Award(SITE, claim_seq, f"site/{SITE}/{claim_seq}", POOL, line, amount, 99, 1)
    return msgspec.structs.replace(award, signature=key.sign(signed_bytes(award)))


def _held_round() -> LedgerState:
    state = joined()
    state, _ = apply(state, wager("w1", "r1", 1))
    state, _ = apply(state, settle("s1", "r1", {1: STRAIGHT_FLUSH}))
    return state


def test_the_held_hit_is_paid_as_central_awards_it_pending_verification() -> None:
    state = _held_round()
    award = _award(2, 1_234_567)
    state, effects = apply(state, WideAreaAwarded(award_event_id(award), AT, award))
    (payout,) = effects
    assert isinstance(payout, PayoutMade)
    assert (payout.table_id, payout.round_id, payout.seat) == ("T1", "r1", 1)
    assert payout.from_meter_cents == 1_234_567
    assert payout.win_cents >= 1_234_567
    assert payout.status == "pending"  # above the table's verification amount
    assert payout.payout_id in state.pending
    chain = state.chain
    assert chain is not None
    assert chain.held == {}
    with pytest.raises(LedgerError, match="no hit claim 2 waits"):
        apply(state, WideAreaAwarded("again", AT, award))


def test_an_award_not_signed_by_central_pays_nothing() -> None:
    state = _held_round()
    forged = _award(2, 9_999_999, key=ControllerKey.generate())
    with pytest.raises(LedgerError, match="not central's"):
        apply(state, WideAreaAwarded(award_event_id(forged), AT, forged))
    unknown = _award(7, 100)
    with pytest.raises(LedgerError, match="no hit claim 7"):
        apply(state, WideAreaAwarded(award_event_id(unknown), AT, unknown))


def test_both_ledgers_end_to_end_every_contribution_once_and_the_hit_awarded_by_central() -> None:
    site_key = ControllerKey.generate()
    prop = joined()
    centre = LedgerState()
    for event in (pool_opened(), table_configured()):
        centre, _ = apply(centre, event)
    link = SiteLinked("link-1", AT, SITE, site_key.public_key, [POOL], "mgr")
    centre, _ = apply(centre, link)
    sent: list[SiteMessage] = []
    for n in range(1, 6):
        prop, effects = apply(prop, wager(f"w{n}", f"r{n}", 1))
        sent += queued(effects)
        hands = {1: STRAIGHT_FLUSH if n == 5 else NOTHING}
        prop, effects = apply(prop, settle(f"s{n}", f"r{n}", hands))
        sent += queued(effects)
    meter_before = centre.pools[POOL].meter
    awards: list[AwardMade] = []
    for message in sent:  # the link's runtime signs each as it sends it
        signed = message.signed(site_key.sign(message.digest.encode()))
        reported = SiteReported(site_event_id(SITE, message.site_seq), AT, signed)
        centre, effects = apply(centre, reported)
        assert isinstance(effects[0], SiteAdvanced)
        awards += [e for e in effects if isinstance(e, AwardMade)]
    (made,) = awards
    assert centre.pools[POOL].wagers_cents == 500  # five contributions, each once
    assert made.amount_cents == int(
        meter_before + 5 * 100 * centre.pools[POOL].terms.rate_of_progression
    )
    award = Award(SITE, made.claim_seq, made.hit_id, POOL, made.line, made.amount_cents, 42, 1)
    award = msgspec.structs.replace(award, signature=CENTRAL.sign(signed_bytes(award)))
    prop, effects = apply(prop, WideAreaAwarded(award_event_id(award), AT, award))
    (payout,) = effects
    assert isinstance(payout, PayoutMade)
    assert payout.from_meter_cents == made.amount_cents
    assert DEALER  # the rig's dealer hand settled every round


def test_a_void_returns_the_wide_area_wager_but_refunds_no_contribution_here() -> None:
    state = joined()
    state, _ = apply(state, wager("w1", "r1", 1))
    refunding = RoundVoided("v1", AT, "T1", "r1", "sup", "misdeal", refund_contributions=True)
    with pytest.raises(LedgerError, match="pool-a is central's"):
        apply(state, refunding)
    state, effects = apply(state, RoundVoided("v2", AT, "T1", "r1", "sup", "misdeal"))
    (returned,) = [e for e in effects if isinstance(e, PayoutMade)]
    assert (returned.seat, returned.returned_cents) == (1, 100)


def test_the_gate_closing_tells_the_signs_of_each_wide_area_pool_why() -> None:
    state = joined()
    closed = WideAreaStatusChanged("close", AT, open=False, reason="central not heard for 60 s")
    state, effects = apply(state, closed)
    receipt = Receipt(7, "close", APPLIED, "", effects)
    (update,) = updates_of(receipt, AT, state, epoch=2)
    assert update == PoolUpdate(AT, 7, POOL, False, "central not heard for 60 s", epoch=2)


def test_michigan_432_1841_a_property_restarted_while_closed_shows_why_at_once() -> None:
    """The sequencer's start tells the signs where the journal stands (docs/wide-area.md)."""
    state = joined(open_link=False)
    state, _ = apply(state, pool_opened("local-open", "local"))
    never = PoolUpdate(AT, 3, POOL, False, NEVER_HEARD, epoch=1)
    assert standing_updates(state, AT, 3, epoch=1)[1:] == [never]
    closed = WideAreaStatusChanged("close", AT, open=False, reason="central not heard for 60 s")
    state, _ = apply(state, closed)
    meter, status = standing_updates(state, AT, 40, epoch=3)
    assert isinstance(meter, MeterUpdate)
    assert (meter.pool_id, meter.seq, meter.epoch) == ("local", 40, 3)  # central's pool: not ours
    assert status == PoolUpdate(AT, 40, POOL, False, "central not heard for 60 s", epoch=3)
    state, _ = apply(state, WideAreaStatusChanged("reopen", AT, open=True))
    reopened = PoolUpdate(AT, 41, POOL, True, "", epoch=3)
    assert standing_updates(state, AT, 41, epoch=3)[1:] == [reopened]
