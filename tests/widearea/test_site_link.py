"""Central's view of a property's chain: each message applied exactly once, forgeries refused.

docs/wide-area.md, "The chain of a property's messages" and "A cut WAN": a duplicate is
acknowledged and never applied, a gap is dropped and resent, the next message must carry
central's head as its ``prev`` and a digest that holds, and a property's totals must equal
central's before its wide-area wagers reopen.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.widearea.messages import (
    GENESIS,
    Contribution,
    HitClaim,
    SiteBody,
    SiteMessage,
    SiteTotals,
    next_message,
)
from controller.widearea.site_link import (
    BAD_BODY,
    BAD_DIGEST,
    BAD_SEQ,
    CHAIN_BROKEN,
    HALTED,
    OTHER_SITE,
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

SITE = "borgata"
AT = "2025-03-01T20:00:00Z"
CARDS = ("As", "Ks", "Qs", "Js", "Ts", "9s", "2h")


def contribution(wager_cents: int = 500, seat: int = 1) -> Contribution:
    return Contribution("wap-1", "t1", f"r-{wager_cents}-{seat}", seat, wager_cents)


def hit(percent: str = "1/10", ways: int = 1, cards: tuple[str, ...] = CARDS) -> HitClaim:
    return HitClaim("wap-1", "t1", "r-hit", 3, "seven-card-straight-flush", percent, ways, cards)


def chain(bodies: list[SiteBody], site: str = SITE) -> list[SiteMessage]:
    """The property's messages for ``bodies``, numbered from 1 and chained from genesis."""
    messages: list[SiteMessage] = []
    prev = GENESIS
    for site_seq, body in enumerate(bodies, start=1):
        message = next_message(site, site_seq, prev, AT, body)
        messages.append(message)
        prev = message.digest
    return messages


def applied(messages: list[SiteMessage], link: SiteLink | None = None) -> SiteLink:
    """The link after each message, in order, is judged and applied."""
    link = link or SiteLink(SITE)
    for message in messages:
        assert judge(link, message) == Apply()
        link = advanced(link, message)
    return link


def totals_of(messages: list[SiteMessage], site: str = SITE) -> SiteTotals:
    """The totals the property claims for its chain ``messages``."""
    bodies = [message.body for message in messages]
    wagers = [body.wager_cents for body in bodies if isinstance(body, Contribution)]
    return SiteTotals(
        site=site,
        through=len(messages),
        head=messages[-1].digest if messages else GENESIS,
        contributions=len(wagers),
        wager_cents=sum(wagers),
        hits=sum(isinstance(body, HitClaim) for body in bodies),
    )


def rebuilt(message: SiteMessage, **changes: object) -> SiteMessage:
    """``message`` with ``changes`` and a digest recomputed to hold (a forger's best effort)."""
    changed = msgspec.structs.replace(message, **changes)
    return next_message(changed.site, changed.site_seq, changed.prev, changed.at, changed.body)


# --- exactly once, whatever the transport does ---------------------------------------------

bodies = st.lists(
    st.one_of(
        st.builds(contribution, st.integers(1, 1_000_000), st.integers(1, 7)),
        st.builds(hit, st.sampled_from(["1", "1/10", "3/100"]), st.integers(1, 7)),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=300)
@given(bodies=bodies, data=st.data())
def test_each_message_is_applied_exactly_once_whatever_the_resends_and_reordering(
    bodies: list[SiteBody], data: st.DataObject
) -> None:
    messages = chain(bodies)
    last = len(messages)
    link = SiteLink(SITE)
    applied_seqs: list[int] = []
    verdicts: set[type] = set()

    def deliver(message: SiteMessage) -> None:
        nonlocal link
        verdict = judge(link, message)
        verdicts.add(type(verdict))
        if message.site_seq <= link.through:
            assert verdict == Duplicate()
        elif message.site_seq > link.through + 1:
            assert verdict == Gap(link.through + 1)
        else:
            assert verdict == Apply()
            link = advanced(link, message)
            applied_seqs.append(message.site_seq)

    for _connection in range(data.draw(st.integers(0, 6), label="lossy connections")):
        # The property resends from after the last acknowledgement it heard (an ack may be
        # lost, so that can be before central's position); the transport drops, doubles
        # and reorders what it carries.
        acked = data.draw(st.integers(0, link.through), label="ack heard")
        sent = list(range(acked + 1, last + 1))
        carried = data.draw(
            st.lists(st.sampled_from(sent), max_size=3 * len(sent)) if sent else st.just([]),
            label="carried",
        )
        for site_seq in carried:
            deliver(messages[site_seq - 1])
    for message in messages[link.through :]:  # a connection that carries everything, in order
        deliver(message)

    assert applied_seqs == list(range(1, last + 1))
    assert Refused not in verdicts
    assert link == SiteLink(
        SITE,
        through=last,
        head=messages[-1].digest,
        contributions=totals_of(messages).contributions,
        wager_cents=totals_of(messages).wager_cents,
        hits=totals_of(messages).hits,
    )
    assert reconcile(link, totals_of(messages)) == Matched(last)


def test_a_resent_message_is_acknowledged_again_and_applied_never() -> None:
    messages = chain([contribution(500), contribution(1_000)])
    link = applied(messages)
    assert [judge(link, message) for message in messages] == [Duplicate(), Duplicate()]
    with pytest.raises(ValueError, match="not the next message"):
        advanced(link, messages[0])
    assert link.wager_cents == 1_500


def test_a_message_beyond_the_next_is_a_gap_naming_where_to_resend_from() -> None:
    messages = chain([contribution(), contribution(), contribution()])
    link = applied(messages[:1])
    assert judge(link, messages[2]) == Gap(expected=2)
    # A gap is not examined: it is dropped unjournaled and judged in full when it is next.
    assert judge(link, msgspec.structs.replace(messages[2], digest="f" * 64)) == Gap(2)


# --- forgeries and broken chains ----------------------------------------------------------


def test_a_forged_message_whose_digest_does_not_hold_is_refused() -> None:
    messages = chain([contribution(500)])
    forged = msgspec.structs.replace(messages[0], body=contribution(50_000))
    verdict = judge(SiteLink(SITE), forged)
    assert isinstance(verdict, Refused)
    assert verdict.reason == BAD_DIGEST
    assert "site_seq 1" in verdict.detail


def test_a_message_spliced_from_another_chain_is_chain_broken_and_halts_nothing() -> None:
    ours = chain([contribution(500), contribution(600), contribution(700)])
    theirs = chain([contribution(900), contribution(900), contribution(900)])
    link = applied(ours[:2])

    verdict = judge(link, theirs[2])  # the right site_seq, another history's prev
    assert isinstance(verdict, Refused)
    assert verdict.reason == CHAIN_BROKEN
    assert ours[1].digest in verdict.detail
    assert theirs[1].digest in verdict.detail
    # Judging halts nothing (the ledger decides): the property's own next message applies.
    assert not link.halted
    assert judge(link, ours[2]) == Apply()


def test_a_forger_who_recomputes_the_digest_still_breaks_the_chain() -> None:
    messages = chain([contribution(500), contribution(600)])
    link = applied(messages[:1])
    forged = rebuilt(messages[1], prev="e" * 64, body=contribution(60_000))
    verdict = judge(link, forged)
    assert isinstance(verdict, Refused)
    assert verdict.reason == CHAIN_BROKEN


def test_a_message_of_another_site_is_refused_even_where_it_would_be_a_duplicate() -> None:
    link = applied(chain([contribution()]))
    for message in chain([contribution(), contribution()], site="tropicana"):
        verdict = judge(link, message)
        assert isinstance(verdict, Refused)
        assert verdict.reason == OTHER_SITE
        assert "'tropicana'" in verdict.detail


def test_a_hostile_site_name_is_quoted_short_in_the_refusal() -> None:
    message = chain([contribution()], site="x" * 10_000)[0]
    verdict = judge(SiteLink(SITE), message)
    assert isinstance(verdict, Refused)
    assert len(verdict.detail) < 200


def test_a_site_seq_below_one_is_refused() -> None:
    message = chain([contribution()])[0]
    for site_seq in (0, -3):
        verdict = judge(SiteLink(SITE), rebuilt(message, site_seq=site_seq))
        assert isinstance(verdict, Refused)
        assert verdict.reason == BAD_SEQ


def test_a_duplicate_is_acknowledged_without_being_examined() -> None:
    # Central keeps only its head's digest: an old site_seq cannot be checked against what
    # was applied, so even an odd one is only acknowledged (its history shows at reconciling).
    link = applied(chain([contribution(), contribution()]))
    odd = msgspec.structs.replace(chain([contribution(0, seat=0)])[0], digest="0" * 64)
    assert judge(link, odd) == Duplicate()


def test_a_rewritten_history_shows_at_reconciliation_by_its_head() -> None:
    ours = chain([contribution(500), contribution(600)])
    rewritten = chain([contribution(500), contribution(601)])
    link = applied(ours)
    assert [judge(link, message) for message in rewritten] == [Duplicate(), Duplicate()]

    verdict = reconcile(link, totals_of(rewritten))
    assert isinstance(verdict, Mismatched)
    assert verdict.problems == (
        f"head: '{rewritten[1].digest}' at the property, '{ours[1].digest}' at central",
        "wager_cents: 1101 at the property, 1100 at central",
    )


# --- bodies -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (contribution(0), "wager_cents 0"),
        (contribution(-500), "wager_cents -500"),
        (contribution(500, seat=0), "seat 0"),
        (Contribution("", "t1", "r1", 1, 500), "pool_id is empty"),
        (Contribution("wap-1", "", "r1", 1, 500), "table_id is empty"),
        (Contribution("wap-1", "t1", "", 1, 500), "round_id is empty"),
        (hit(percent="0"), "percent '0'"),
        (hit(percent="3/2"), "percent '3/2'"),
        (hit(percent="1/0"), "percent '1/0'"),
        (hit(percent="-1/10"), "percent '-1/10'"),
        (hit(percent="0.1"), "percent '0.1'"),
        (hit(percent="1e999999999"), "percent '1e999999999'"),
        (hit(percent=""), "percent ''"),
        (hit(ways=0), "ways 0"),
        (hit(cards=CARDS[:6]), "6 cards"),
        (hit(cards=(*CARDS, "3d")), "8 cards"),
        (hit(cards=(*CARDS[:6], "As")), "7 cards"),
        (hit(cards=(*CARDS[:6], "")), "a card is empty"),
        (HitClaim("wap-1", "t1", "r1", 1, "", "1/10", 1, CARDS), "line is empty"),
    ],
)
def test_a_body_that_cannot_be_right_is_refused_naming_what_is_wrong(
    body: SiteBody, named: str
) -> None:
    verdict = judge(SiteLink(SITE), chain([body])[0])
    assert isinstance(verdict, Refused)
    assert verdict.reason == BAD_BODY
    assert named in verdict.detail


def test_a_body_names_every_problem_it_has() -> None:
    verdict = judge(SiteLink(SITE), chain([Contribution("", "t1", "r1", 0, 0)])[0])
    assert verdict == Refused(
        BAD_BODY,
        "site_seq 1: pool_id is empty; seat 0: seats count from 1; "
        "wager_cents 0: a wager is more than 0",
    )


def test_hits_of_the_whole_meter_or_an_exact_part_shared_any_ways_are_applied() -> None:
    messages = chain([hit("1"), hit("1/10", ways=3), hit("7/1000", ways=7)])
    link = applied(messages)
    assert (link.through, link.hits, link.contributions, link.wager_cents) == (3, 3, 0, 0)


def test_advancing_refuses_anything_but_the_next_message() -> None:
    messages = chain([contribution(), contribution(), contribution()])
    link = applied(messages[:1])
    with pytest.raises(ValueError, match="not the next message"):
        advanced(link, messages[2])
    with pytest.raises(ValueError, match="not the next message"):
        advanced(link, chain([contribution(), contribution()], site="tropicana")[1])
    with pytest.raises(ValueError, match="does not follow central's head"):
        advanced(link, rebuilt(messages[1], prev="e" * 64))
    assert advanced(link, messages[1]).through == 2


# --- halting ------------------------------------------------------------------------------


def test_a_halted_link_takes_and_acknowledges_nothing_until_a_manager_resumes_it() -> None:
    messages = chain([contribution(), contribution()])
    link = halt(applied(messages[:1]), "chain-broken at site_seq 2")
    for message in messages:
        verdict = judge(link, message)
        assert isinstance(verdict, Refused)
        assert verdict.reason == HALTED
        assert "chain-broken at site_seq 2" in verdict.detail

    reopened = resume(link)
    assert not reopened.halted
    assert judge(reopened, messages[0]) == Duplicate()
    assert judge(reopened, messages[1]) == Apply()


def test_a_halt_keeps_its_first_reason_and_must_give_one() -> None:
    link = halt(halt(SiteLink(SITE), "bad-digest at 1"), "halted")
    assert link.halted == "bad-digest at 1"
    with pytest.raises(ValueError, match="says why"):
        halt(SiteLink(SITE), "")


# --- reconciliation -----------------------------------------------------------------------


def test_totals_equal_to_centrals_match_and_are_recorded_as_reconciled() -> None:
    messages = chain([contribution(12_000), hit(), contribution(500)])
    link = applied(messages)
    verdict = reconcile(link, totals_of(messages))
    assert verdict == Matched(3)
    assert reconciled(link, verdict).reconciled_through == 3
    assert reconcile(SiteLink(SITE), totals_of([])) == Matched(0)


def test_totals_that_differ_name_each_field_with_both_values() -> None:
    messages = chain([contribution(12_000), hit()])
    link = applied(messages)
    claimed = SiteTotals("tropicana", 2, "a" * 64, contributions=2, wager_cents=12_500, hits=0)
    verdict = reconcile(link, claimed)
    assert verdict == Mismatched(
        2,
        (
            "site: 'tropicana' at the property, 'borgata' at central",
            f"head: '{'a' * 64}' at the property, '{messages[1].digest}' at central",
            "contributions: 2 at the property, 1 at central",
            "wager_cents: 12500 at the property, 12000 at central",
            "hits: 0 at the property, 1 at central",
        ),
    )


def test_totals_beyond_what_central_applied_wait_for_the_gap_to_be_resent() -> None:
    messages = chain([contribution(), contribution()])
    assert reconcile(applied(messages[:1]), totals_of(messages)) == Pending()


def test_totals_behind_what_central_applied_are_an_old_report() -> None:
    messages = chain([contribution(), contribution()])
    assert reconcile(applied(messages), totals_of(messages[:1])) == Stale()


def test_a_halted_link_never_matches_so_the_propertys_wagers_stay_closed() -> None:
    messages = chain([contribution()])
    link = halt(applied(messages), "bad-digest at site_seq 2")
    verdict = reconcile(link, totals_of(messages))
    assert isinstance(verdict, Mismatched)
    assert verdict.problems == ("halted: central took nothing since 1 (bad-digest at site_seq 2)",)


def test_reconciled_never_goes_back_nor_beyond_what_was_applied() -> None:
    link = applied(chain([contribution(), contribution()]))
    later = reconciled(link, Matched(2))
    assert reconciled(later, Matched(1)).reconciled_through == 2
    with pytest.raises(ValueError, match="applied through 2"):
        reconciled(link, Matched(3))


# --- storage ------------------------------------------------------------------------------


def test_a_link_survives_the_ledgers_json_snapshot_and_refuses_unknown_fields() -> None:
    link = halt(applied(chain([contribution(700), hit()])), "chain-broken at 3")
    data = msgspec.json.encode(link)
    assert msgspec.json.decode(data, type=SiteLink) == link
    assert msgspec.json.decode(b'{"site":"borgata"}', type=SiteLink) == SiteLink(SITE)
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(b'{"site":"borgata","bonus":1}', type=SiteLink)
