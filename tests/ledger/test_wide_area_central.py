"""Central's ledger on a wide-area link: each property message applied once, hits awarded here.

controller/ledger/wide_area/central.py; docs/wide-area.md. N.J.A.C. 13:69E-1.39C: the central system
keeps every meter and win, secured against alteration: a property's messages are chained and
signed, and a forged or spliced one moves no meter and halts the link. The property's key is a
real Ed25519 key; the pool and its paytable are the journal rig's (progressive-1).
"""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest
from support.journal.journal_rig import (
    AT,
    NOTHING,
    POOL,
    SEED_CENTS,
    STRAIGHT_FLUSH,
    pool_opened,
    table_configured,
)

from controller.effects import Contributed
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.snapshot import snapshot_text
from controller.rules.cards import SevenCardHand
from controller.rules.qualify import qualifier
from controller.security.controller_key import ControllerKey
from controller.wide_effects import (
    AwardMade,
    SiteAdvanced,
    SiteLinkResumed,
    SiteReconciled,
    SiteRefused,
)
from controller.wide_events import (
    SiteLinked,
    SiteReported,
    SiteResumed,
    SiteTotalsReported,
    site_event_id,
    totals_event_id,
)
from controller.widearea.messages import (
    GENESIS,
    Contribution,
    HitClaim,
    SiteBody,
    SiteMessage,
    SiteTotals,
    next_message,
    totals_bytes,
)

SITE = "atlantic"
WAGER = 100


class Property:
    """A property's side, as far as central sees it: its key and its chain."""

    def __init__(self, site: str = SITE) -> None:
        self.site = site
        self.key = ControllerKey.generate()
        self.sent: list[SiteMessage] = []

    def say(self, body: SiteBody, *, key: ControllerKey | None = None) -> SiteMessage:
        """The next message of the chain, signed (by ``key`` instead, to forge one)."""
        prev = self.sent[-1].digest if self.sent else GENESIS
        message = next_message(self.site, len(self.sent) + 1, prev, AT, body)
        signer = key or self.key
        message = message.signed(signer.sign(message.digest.encode()))
        self.sent.append(message)
        return message

    def contribution(self, round_no: int, seat: int = 1) -> SiteMessage:
        """A progressive wager locked at the property."""
        return self.say(Contribution(POOL, "t1", f"r{round_no}", seat, WAGER))

    def claim(self, round_no: int, cards: list[str], seat: int = 1) -> SiteMessage:
        """A hit claimed with the seat's seven cards."""
        return self.say(HitClaim(POOL, "t1", f"r{round_no}", seat, "x", "1", 1, tuple(cards)))

    def totals(self, *, wager_cents: int | None = None) -> SiteTotals:
        """What the property says it sent, signed (``wager_cents`` to misreport it)."""
        contributions = [m for m in self.sent if isinstance(m.body, Contribution)]
        cents = sum(WAGER for _ in contributions) if wager_cents is None else wager_cents
        hits = len(self.sent) - len(contributions)
        head = self.sent[-1].digest if self.sent else GENESIS
        totals = SiteTotals(self.site, len(self.sent), head, len(contributions), cents, hits)
        return msgspec.structs.replace(totals, signature=self.key.sign(totals_bytes(totals)))


def central(prop: Property) -> LedgerState:
    """A pool, a table carrying its paytable, and the property linked to feed the pool."""
    state = LedgerState()
    for event in (pool_opened(), table_configured()):
        state, _ = apply(state, event)
    linked = SiteLinked("link-1", AT, prop.site, prop.key.public_key, [POOL], "mgr")
    state, effects = apply(state, linked)
    assert effects[0].site == prop.site  # type: ignore[union-attr]
    return state


def report(state: LedgerState, message: SiteMessage) -> tuple[LedgerState, tuple[object, ...]]:
    return apply(state, SiteReported(site_event_id(message.site, message.site_seq), AT, message))


def test_contributions_feed_the_wide_area_meter_as_a_local_tables_do() -> None:
    prop = Property()
    state = central(prop)
    for n in range(1, 4):
        state, effects = report(state, prop.contribution(n))
        advance, contributed = effects[0], effects[1]
        assert advance == SiteAdvanced(SITE, n, prop.sent[-1].digest)
        assert isinstance(contributed, Contributed)
        assert contributed.table_id == f"{SITE}/t1"
    pool = state.pools[POOL]
    assert pool.wagers_cents == 3 * WAGER
    assert pool.meter == SEED_CENTS + 3 * WAGER * pool.terms.rate_of_progression
    link = state.sites[SITE].link
    assert (link.through, link.head, link.contributions, link.wager_cents) == (
        3, prop.sent[-1].digest, 3, 3 * WAGER,
    )  # fmt: skip


def test_a_message_applied_is_never_applied_again_and_one_after_a_gap_waits() -> None:
    prop = Property()
    state = central(prop)
    first = prop.contribution(1)
    state, _ = report(state, first)
    meter = state.pools[POOL].meter
    with pytest.raises(LedgerError, match="already applied"):
        report(state, first)
    prop.contribution(2)  # lost on the way
    third = prop.contribution(3)
    with pytest.raises(LedgerError, match="after a gap"):
        report(state, third)
    assert state.pools[POOL].meter == meter


def test_13_69e_1_39c_a_message_not_signed_by_the_property_moves_no_meter() -> None:
    prop = Property()
    state = central(prop)
    meter = state.pools[POOL].meter
    forged = prop.say(Contribution(POOL, "t1", "r1", 1, WAGER), key=ControllerKey.generate())
    state, effects = report(state, forged)
    assert effects == (SiteRefused(SITE, 1, "forged", "not the property's key"),)
    assert state.pools[POOL].meter == meter
    # Someone else's doing: the link goes on, and the property's own message 1 is applied.
    assert not state.sites[SITE].link.halted
    prop.sent.pop()
    state, effects = report(state, prop.contribution(1))
    assert isinstance(effects[0], SiteAdvanced)


def test_13_69e_1_39c_a_message_spliced_from_another_history_breaks_the_chain() -> None:
    prop = Property()
    state = central(prop)
    state, _ = report(state, prop.contribution(1))
    other = Property()
    other.key = prop.key  # the property's own key, another history (a rewritten journal)
    other.contribution(7)
    spliced = other.contribution(8)  # site_seq 2, but its prev is not central's head
    meter = state.pools[POOL].meter
    state, effects = report(state, spliced)
    assert isinstance(effects[0], SiteRefused)
    assert effects[0].reason == "chain-broken"
    assert state.sites[SITE].link.through == 1
    assert state.sites[SITE].link.halted.startswith("chain-broken")
    # The property is at fault: nothing more of it is applied until a manager acts.
    prop.sent.pop()
    with pytest.raises(LedgerError, match="halted"):
        report(state, prop.contribution(2))
    assert state.pools[POOL].meter == meter


def test_a_pool_the_property_does_not_feed_is_refused() -> None:
    prop = Property()
    state = central(prop)
    state, _ = apply(state, pool_opened("open-b", "pool-b"))
    message = prop.say(Contribution("pool-b", "t1", "r1", 1, WAGER))
    state, effects = report(state, message)
    assert isinstance(effects[0], SiteRefused)
    assert effects[0].reason == "pool-not-fed"
    assert state.pools["pool-b"].wagers_cents == 0


def test_central_awards_a_claimed_hit_from_its_meter_evaluating_the_cards_itself() -> None:
    prop = Property()
    state = central(prop)
    for n in range(1, 11):
        state, _ = report(state, prop.contribution(n))
    meter = state.pools[POOL].meter
    state, effects = report(state, prop.claim(11, STRAIGHT_FLUSH))
    award = next(effect for effect in effects if isinstance(effect, AwardMade))
    table = state.tables["T1"].progressive
    assert table is not None
    row = table.line_for(qualifier(table.joker)(SevenCardHand.parse(STRAIGHT_FLUSH).indices), meter)
    assert row is not None
    percent = row.pays.percent  # type: ignore[union-attr]
    assert award.amount_cents == int(meter * Fraction(percent))
    assert (award.site, award.claim_seq, award.line) == (SITE, 11, str(row.line))
    assert award.hit_id == f"site/{SITE}/11"
    assert state.sites[SITE].link.hits == 1


def test_a_claim_whose_cards_make_no_meter_line_is_refused_and_pays_nothing() -> None:
    prop = Property()
    state = central(prop)
    meter = state.pools[POOL].meter
    state, effects = report(state, prop.claim(1, NOTHING))
    assert isinstance(effects[0], SiteRefused)
    assert effects[0].reason == "not-a-hit"
    assert state.pools[POOL].meter == meter


def test_two_properties_hits_are_paid_in_the_order_central_sequences_them() -> None:
    first, second = Property("atlantic"), Property("boardwalk")
    state = central(first)
    state, _ = apply(
        state, SiteLinked("link-2", AT, second.site, second.key.public_key, [POOL], "mgr")
    )
    for n in range(1, 11):
        state, _ = report(state, first.contribution(n))
    state, one = report(state, first.claim(11, STRAIGHT_FLUSH))
    state, two = report(state, second.claim(1, STRAIGHT_FLUSH))
    paid = [e.amount_cents for e in (*one, *two) if isinstance(e, AwardMade)]
    assert len(paid) == 2
    assert paid[0] > paid[1] == SEED_CENTS  # the second is paid from the reseeded meter


def test_michigan_432_1841_totals_are_reconciled_and_a_mismatch_halts_the_link() -> None:
    prop = Property()
    state = central(prop)
    for n in range(1, 4):
        state, _ = report(state, prop.contribution(n))
    totals = prop.totals()
    state, effects = apply(state, SiteTotalsReported(totals_event_id(totals), AT, totals))
    assert effects == (SiteReconciled(SITE, 3, matched=True, problems=[]),)
    assert state.sites[SITE].link.reconciled_through == 3
    state, _ = report(state, prop.contribution(4))
    wrong = prop.totals(wager_cents=999)
    state, effects = apply(state, SiteTotalsReported(totals_event_id(wrong), AT, wrong))
    reconciled = effects[0]
    assert isinstance(reconciled, SiteReconciled)
    assert not reconciled.matched
    assert any("wager_cents" in problem for problem in reconciled.problems)
    assert state.sites[SITE].link.halted


def test_totals_not_signed_by_the_property_are_refused() -> None:
    prop = Property()
    state = central(prop)
    state, _ = report(state, prop.contribution(1))
    totals = prop.totals()
    forged = msgspec.structs.replace(
        totals, signature=ControllerKey.generate().sign(totals_bytes(totals))
    )
    with pytest.raises(LedgerError, match="signature"):
        apply(state, SiteTotalsReported(totals_event_id(forged), AT, forged))


def test_a_halted_link_resumes_by_a_managers_decision_and_halts_again_while_still_wrong() -> None:
    """docs/wide-area.md, "A halted link": the pool the property fed linked, then resumed."""
    prop = Property()
    state = central(prop)
    state, _ = report(state, prop.contribution(1))
    unfed = prop.say(Contribution("pool-b", "t1", "r2", 1, WAGER))  # a pool it does not feed
    state, effects = report(state, unfed)
    assert isinstance(effects[0], SiteRefused)
    assert state.sites[SITE].link.halted.startswith("pool-not-fed")
    with pytest.raises(LedgerError, match="says why"):
        apply(state, SiteResumed("resume-0", AT, SITE, "mgr", ""))
    with pytest.raises(LedgerError, match="no linked property"):
        apply(state, SiteResumed("resume-0", AT, "elsewhere", "mgr", "ticket 5120"))
    # Resumed before the cause is settled: the same message, resent, halts it again.
    why = state.sites[SITE].link.halted
    # A link never resumed snapshots as before resumption existed: every digest unchanged.
    assert '"resumed"' not in snapshot_text(state)
    state, (resumed,) = apply(state, SiteResumed("resume-1", AT, SITE, "mgr", "try again"))
    assert resumed == SiteLinkResumed(SITE, 1, why)  # applied through 1; why it had halted
    assert state.sites[SITE].link.resumed == 1
    assert '"resumed":1' in snapshot_text(state)
    # The message that halted it was journaled under its id: after a resumption, another.
    assert site_event_id(SITE, 2, state.sites[SITE].link.resumed) == f"site/{SITE}/2/resumed-1"
    assert not state.sites[SITE].link.halted
    state, effects = report(state, unfed)
    assert isinstance(effects[0], SiteRefused)
    # Settled: pool-b opened at central and linked for the property; resumed, it applies.
    for event in (pool_opened("open-b", "pool-b"), SiteLinked(
        "link-2", AT, SITE, prop.key.public_key, [POOL, "pool-b"], "mgr"
    )):  # fmt: skip
        state, _ = apply(state, event)
    assert state.sites[SITE].link.halted  # relinking alone resumes nothing
    state, _ = apply(state, SiteResumed("resume-2", AT, SITE, "mgr", "pool-b linked"))
    state, effects = report(state, unfed)
    assert effects[0] == SiteAdvanced(SITE, 2, unfed.digest)
    assert state.pools["pool-b"].contributions > 0
    with pytest.raises(LedgerError, match="not halted"):
        apply(state, SiteResumed("resume-3", AT, SITE, "mgr", "again"))
