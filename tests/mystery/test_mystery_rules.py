"""The sealed trigger's pure rules: the commitment, each way a reveal can lie, the keeper's rules.

docs/rules.md, "Mystery levels: the sealed trigger": a draw's commitment is opened only by its
own trigger and nonce, for its own journal, pool, level and draw; the trigger lies in
``[floor, ceiling)``; the hit is the first contribution to reach it. The keeper (the signer,
or the in-process one) draws each number once, keeps a draw's meter monotonic, spends a draw at
its trigger, and the daemon's client takes a keeper ahead of it for an alarm.
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.mystery import keeper as keeper_rules
from controller.mystery import store as store_module
from controller.mystery.core import (
    COMMITMENT_DOMAIN,
    DrawKey,
    Drawn,
    DrawRequest,
    Meter,
    MysteryInputError,
    MysteryRefusedError,
    Reveal,
    Sealed,
    commitment,
    drawn_bytes,
    first_reaching,
    hit_holds,
    reveal_holds,
    seal,
)
from controller.mystery.keeper import (
    LocalKeeper,
    MeterBehindError,
    MysteryAlarmError,
    Query,
    Verdict,
    judge_check,
    judge_draw,
    probed,
    slot,
)
from controller.mystery.store import SealedFile
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-12-01T12:00:00+00:00"
NONCE = "ab" * 32


def request(
    key: ControllerKey, draw: int = 1, floor: int = 100_000, ceiling: int = 500_000
) -> DrawRequest:
    return DrawRequest("c1", "journal-a", "grand", "mystery", draw, floor, ceiling, key.key_id, AT)


def query(draw: int, cents: int, numerator: int = 0, denominator: int = 1) -> Query:
    return Query("c1", "journal-a", "grand", "mystery", draw, Meter(cents, numerator, denominator))


def spent(sealed: Sealed) -> tuple[Drawn, Reveal]:
    """The draw and its reveal, reached by a meter exactly at the trigger."""
    _, kept, was_spent = judge_check(sealed, query(sealed.drawn.draw, sealed.trigger))
    assert was_spent
    return kept.drawn, kept.reveal()


def test_a_draw_is_committed_and_signed_and_its_reveal_opens_it(key: ControllerKey) -> None:
    sealed = seal(request(key), key.sign)
    drawn, reveal = spent(sealed)
    assert 100_000 <= reveal.trigger < 500_000
    assert len(bytes.fromhex(reveal.nonce)) == 32
    assert drawn.commitment == commitment(drawn.key, reveal.trigger, reveal.nonce)
    assert reveal_holds(drawn, reveal, [key.public_key]) is None
    public = msgspec.json.encode(drawn)
    assert reveal.nonce.encode() not in public  # the statement holds no secret
    assert b"trigger" not in public
    assert str(reveal.trigger) not in repr(sealed)  # nor does a sealed draw's repr


def test_the_commitment_is_sha256_over_the_domain_and_the_draws_canonical_fields() -> None:
    import hashlib  # noqa: PLC0415 - the one test that recomputes it by hand

    key = DrawKey("journal-a", "grand", "mystery", 3)
    expected = hashlib.sha256(
        COMMITMENT_DOMAIN
        + b'{"draw":3,"journal":"journal-a","level":"mystery","nonce":"' + NONCE.encode()
        + b'","pool":"grand","trigger":123456}'
    ).hexdigest()  # fmt: skip
    assert commitment(key, 123_456, NONCE) == expected


@pytest.mark.parametrize(
    ("lie", "reason"),
    [
        ({"nonce": "cd" * 32}, "do not open the draw's commitment"),
        ({"trigger": "shift"}, "do not open the draw's commitment"),
        ({"journal": "journal-b"}, "the reveal is of journal 'journal-b'"),
        ({"pool": "major"}, "the reveal is of pool 'major'"),
        ({"level": "minor"}, "the reveal is of level 'minor'"),
        ({"draw": 2}, "the reveal is of draw 2"),
        ({"nonce": "not hex"}, "not 32 bytes of hex"),
        ({"hit": Meter(1)}, "below the trigger"),
    ],
)
def test_every_way_a_reveal_can_lie_is_refused(
    key: ControllerKey, lie: dict[str, object], reason: str
) -> None:
    drawn, reveal = spent(seal(request(key), key.sign))
    if lie.get("trigger") == "shift":
        lie = {"trigger": reveal.trigger + 1}
    forged = msgspec.structs.replace(reveal, **lie)
    assert reason in (reveal_holds(drawn, forged) or "")


def test_a_trigger_outside_the_range_is_refused_even_when_committed_to(
    key: ControllerKey,
) -> None:
    # A dishonest keeper that committed to a trigger at the ceiling: the commitment opens,
    # and the reveal is still refused.
    drawn, reveal = spent(seal(request(key), key.sign))
    for trigger in (drawn.ceiling, drawn.floor - 1):
        bent = msgspec.structs.replace(
            drawn, commitment=commitment(drawn.key, trigger, reveal.nonce)
        )
        bent = msgspec.structs.replace(bent, signature=key.sign(drawn_bytes(bent)))
        forged = msgspec.structs.replace(reveal, trigger=trigger, hit=Meter(drawn.ceiling))
        assert "outside the level's range" in (reveal_holds(bent, forged, [key.public_key]) or "")


def test_a_draw_statement_not_signed_by_the_controller_key_is_refused(
    key: ControllerKey,
) -> None:
    drawn, reveal = spent(seal(request(key), key.sign))
    other = ControllerKey.generate()
    assert "none of the controller's public keys" in (
        reveal_holds(drawn, reveal, [other.public_key]) or ""
    )
    widened = msgspec.structs.replace(drawn, ceiling=drawn.ceiling + 1)  # signature now stale
    assert "none of the controller's public keys" in (
        reveal_holds(widened, reveal, [key.public_key]) or ""
    )


def test_the_hit_is_the_first_contribution_to_reach_the_trigger(key: ControllerKey) -> None:
    sealed = seal(request(key, floor=1_000, ceiling=1_001), key.sign)  # the trigger is 1000
    meters = [Meter(999, 1, 3), Meter(999, 2, 3), Meter(1_000, 1, 3), Meter(1_004)]
    drawn, reveal = sealed.drawn, msgspec.structs.replace(spent(sealed)[1], hit=Meter(1_000, 2, 6))
    assert first_reaching(meters, 1_000) == 2
    assert hit_holds(drawn, reveal, meters, [key.public_key]) is None  # 2/6 is 1/3
    late = msgspec.structs.replace(reveal, hit=Meter(1_004))
    assert "is number 2" in (hit_holds(drawn, late, meters) or "")
    assert "no contribution reaches" in (hit_holds(drawn, reveal, meters[:2]) or "")
    backwards = [Meter(999, 2, 3), Meter(999, 1, 3), Meter(1_000, 1, 3)]
    assert "goes down at contribution 1" in (hit_holds(drawn, reveal, backwards) or "")


def test_a_draw_is_made_once_its_range_never_changes_and_the_next_waits_for_the_hit(
    key: ControllerKey,
) -> None:
    assert judge_draw(None, request(key)) == "new"
    sealed = seal(request(key, draw=4), key.sign)
    assert judge_draw(sealed, request(key, draw=4)) == "again"
    with pytest.raises(MysteryRefusedError, match="asked again from 100000 to 600000"):
        judge_draw(sealed, request(key, draw=4, ceiling=600_000))
    with pytest.raises(MysteryRefusedError, match="has not hit yet"):
        judge_draw(sealed, request(key, draw=5))
    with pytest.raises(MysteryRefusedError, match="journal went back"):
        judge_draw(sealed, request(key, draw=3))
    _, kept, _ = judge_check(sealed, query(4, 500_000))
    assert judge_draw(kept, request(key, draw=5)) == "new"
    with pytest.raises(MysteryRefusedError, match="skips draw 5"):
        judge_draw(kept, request(key, draw=6))


@pytest.mark.parametrize(
    ("floor", "ceiling", "draw", "reason"),
    [
        (500, 500, 1, "below the ceiling"),
        (-1, 500, 1, "at least 0"),
        (0, 500, 0, "numbered from 1"),
    ],
)
def test_a_draw_of_no_range_is_refused(
    key: ControllerKey, floor: int, ceiling: int, draw: int, reason: str
) -> None:
    with pytest.raises(MysteryInputError, match=reason):
        judge_draw(None, request(key, draw=draw, floor=floor, ceiling=ceiling))


def test_the_keepers_meter_only_goes_up_and_the_trigger_spends_the_draw(
    key: ControllerKey,
) -> None:
    sealed = seal(request(key, floor=1_000, ceiling=1_001), key.sign)  # the trigger is 1000
    verdict, sealed, _ = judge_check(sealed, query(1, 999, 1, 2))
    assert verdict == Verdict(1, None, None)
    verdict, sealed, _ = judge_check(sealed, query(1, 999, 1, 2))  # asked again: same answer
    assert verdict == Verdict(1, Meter(999, 1, 2), None)
    with pytest.raises(MeterBehindError, match="below the 999 cents already asked"):
        judge_check(sealed, query(1, 999, 1, 3))  # a lower fraction of the same cents
    verdict, sealed, was_spent = judge_check(sealed, query(1, 1_000))
    assert was_spent
    assert verdict.reveal is not None
    assert verdict.reveal.trigger == 1_000
    again, _, was_spent = judge_check(sealed, query(1, 1_200))  # spent: the same reveal
    assert not was_spent
    assert again.reveal == verdict.reveal
    with pytest.raises(MeterBehindError):
        judge_check(sealed, query(1, 999))
    with pytest.raises(MysteryRefusedError, match="no draw 2"):
        judge_check(sealed, query(2, 1_500))
    with pytest.raises(MysteryInputError, match="carried fraction of 3/2"):
        judge_check(sealed, query(1, 1_500, 3, 2))


def test_the_client_takes_a_keeper_asked_by_someone_else_for_an_alarm() -> None:
    asked, since = Meter(2_000), Meter(1_900)
    assert probed(Verdict(1, None), asked, since) is None  # nothing asked (or keeper restarted)
    assert probed(Verdict(1, Meter(1_900)), asked, since) is None  # our own last question
    assert probed(Verdict(1, Meter(1_800)), asked, since) is None  # behind: a keeper restarted
    assert probed(Verdict(1, Meter(2_000)), asked, since) is None  # our question, asked again
    assert "someone else" in (probed(Verdict(1, Meter(1_950)), asked, since) or "")
    assert "someone else" in (probed(Verdict(1, Meter(1_000)), asked, None) or "")
    reveal = Reveal("journal-a", "grand", "mystery", 1, 1_950, NONCE, Meter(1_950))
    assert "spent draw 1 at a meter of 1950" in (
        probed(Verdict(1, Meter(1_950), reveal), asked, since) or ""
    )
    ours = msgspec.structs.replace(reveal, hit=asked)
    assert probed(Verdict(1, None, ours), asked, since) is None


def test_the_in_process_keeper_has_the_signers_interface_and_rules(key: ControllerKey) -> None:
    keeper = LocalKeeper(key)
    drawn = keeper.draw(request(key, floor=1_000, ceiling=1_001))
    assert keeper.draw(request(key, floor=1_000, ceiling=1_001)) == drawn
    assert not keeper.check(query(1, 999), None).reached
    with pytest.raises(MysteryAlarmError, match="ahead of the daemon"):
        keeper.check(query(1, 998), None)
    with pytest.raises(MysteryAlarmError, match="someone else"):
        keeper.check(query(1, 999, 1, 2), Meter(998))
    verdict = keeper.check(query(1, 1_000), Meter(999, 1, 2))
    assert verdict.reveal is not None
    assert reveal_holds(drawn, verdict.reveal, [key.public_key]) is None
    with pytest.raises(MysteryRefusedError, match="not this keeper's"):
        keeper.draw(
            msgspec.structs.replace(request(key, draw=2), key_id=ControllerKey.generate().key_id)
        )
    with pytest.raises(MysteryAlarmError, match="asked again from 1000 to 2000"):
        keeper.draw(request(key, floor=1_000, ceiling=2_000))


def test_a_keeper_holds_draws_for_a_bounded_number_of_levels(
    key: ControllerKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keeper_rules, "MAX_LEVELS", 2)
    keeper = LocalKeeper(key)
    for level in ("one", "two"):
        keeper.draw(msgspec.structs.replace(request(key), level=level))
    with pytest.raises(MysteryRefusedError, match="2 levels already"):
        keeper.draw(msgspec.structs.replace(request(key), level="three"))
    keeper.draw(msgspec.structs.replace(request(key), level="two"))  # one it holds: answered


def test_the_in_process_keepers_file_keeps_the_draw_across_a_restart_at_mode_0600(
    key: ControllerKey, tmp_path: Path
) -> None:
    path = tmp_path / "mystery.json"
    keeper = LocalKeeper(key, SealedFile(path))
    drawn = keeper.draw(request(key))
    assert not keeper.check(query(1, 50_000), None).reached
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    keeper = LocalKeeper(key, SealedFile(path))  # the daemon restarted
    assert keeper.draw(request(key)) == drawn
    with pytest.raises(MysteryAlarmError, match="below the 50000 cents"):
        keeper.check(query(1, 40_000), None)
    verdict = keeper.check(query(1, 500_000), Meter(50_000))
    assert verdict.reveal is not None
    assert reveal_holds(drawn, verdict.reveal, [key.public_key]) is None
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(MysteryInputError, match="not a sealed draws file"):
        LocalKeeper(key, SealedFile(path))


@given(
    span=st.integers(1, 50),
    steps=st.lists(st.tuples(st.integers(-5, 8), st.integers(0, 2)), min_size=1, max_size=40),
)
def test_whatever_is_asked_the_keeper_reveals_exactly_at_the_first_meter_to_reach_it(
    span: int, steps: list[tuple[int, int]]
) -> None:
    key = ControllerKey.generate()
    sealed = seal(request(key, floor=100, ceiling=100 + span), key.sign)
    cents, highest, first_hit = 90, None, None
    for move, thirds in steps:
        cents = max(0, cents + move)
        meter = Meter(cents, thirds, 3)
        try:
            verdict, sealed, _ = judge_check(sealed, query(1, meter.cents, thirds, 3))
        except MeterBehindError:
            assert highest is not None
            assert meter.exact() < highest.exact()  # refused only below the highest asked
            continue
        assert highest is None or meter.exact() >= highest.exact()
        assert verdict.previous == highest
        if first_hit is None:  # once spent, the keeper's view stays at the hit
            highest = meter
        if first_hit is None and cents >= sealed.trigger:
            first_hit = meter
        assert verdict.reached == (first_hit is not None)
        if verdict.reveal is not None:
            assert verdict.reveal.hit == first_hit
            assert reveal_holds(sealed.drawn, verdict.reveal, [key.public_key]) is None


def test_the_views_log_is_replayed_past_a_torn_line_and_compacted_into_the_file(
    key: ControllerKey, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "COMPACT_AFTER", 3)
    path = tmp_path / "mystery.json"
    keeper = LocalKeeper(key, SealedFile(path))
    keeper.draw(request(key))
    since = None
    for cents in (10_000, 20_000, 30_000):
        keeper.check(query(1, cents), since)
        since = Meter(cents)
    views = tmp_path / "mystery.json.views"
    assert len(views.read_bytes().splitlines()) == 3
    assert stat.S_IMODE(views.stat().st_mode) == 0o600
    keeper.check(query(1, 40_000), since)  # the fourth: the file written again, the log emptied
    assert views.read_bytes() == b""
    assert b'"cents":40000' in path.read_bytes()
    keeper.check(query(1, 50_000), Meter(40_000))
    with views.open("ab") as log:
        log.write(b'["torn", 1, {"cen')  # a crash in the middle of a line
    restarted = LocalKeeper(key, SealedFile(path))
    with pytest.raises(MysteryAlarmError, match="below the 50000 cents"):
        restarted.check(query(1, 45_000), Meter(40_000))
    assert not restarted.check(query(1, 50_000), Meter(40_000)).reached  # asked again


def test_a_view_logged_after_a_draw_was_spent_is_passed_over(
    key: ControllerKey, tmp_path: Path
) -> None:
    path = tmp_path / "mystery.json"
    keeper = LocalKeeper(key, SealedFile(path))
    keeper.draw(request(key))
    keeper.check(query(1, 500_000), None)  # spent: the file written, the log emptied
    (tmp_path / "mystery.json.views").write_bytes(
        msgspec.json.encode(store_module.View(slot("c1", "journal-a", "grand", "mystery"), 1,
                                              Meter(900_000))) + b"\n"
    )  # fmt: skip
    keeper = LocalKeeper(key, SealedFile(path))
    drawn = keeper.draw(request(key, draw=2))
    assert not keeper.check(query(2, 1_000), None).reached  # 900,000 never became a view
    assert drawn.draw == 2
