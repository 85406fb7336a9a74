"""What an Alpha sign shows of a mystery level: its meter, and the ceiling it must hit by.

A mystery level hits at a trigger drawn in [floor, ceiling) and sealed until the hit (docs/rules.md
§ 10); the ceiling is public, and the sign says it beside the meter, as the table progressives'
"must hit by" signs do (docs/signs.md, "What a sign shows"). The whole text shows only when it
fits the sign's STRING file; a sign too narrow shows the meter alone, and a pool that is no
mystery level shows what it always did. The state machine on a fake clock.
"""

from __future__ import annotations

from support.drivers.sign_shows import shown

from controller.outputs import HitAnnouncement, MeterUpdate
from drivers.signs.behaviour import SignBehaviour
from drivers.signs.rules import SignRules

POOL = "stax.grand"
AT = "2025-01-01T00:00:00.000000Z"


def meter(seq: int, cents: int, ceiling: int | None = 150_000) -> MeterUpdate:
    if ceiling is None:
        return MeterUpdate(AT, seq, POOL, cents, 0, 0, 100_000)
    return MeterUpdate(AT, seq, POOL, cents, 0, 0, 100_000, must_hit_by_cents=ceiling)


def test_a_mystery_levels_sign_shows_its_meter_and_must_hit_by() -> None:
    rules = SignRules(pool_id=POOL, width=64)
    assert shown(rules, meter(1, 123_456), meter(2, 123_501)) == [
        "$1,234.56 MUST HIT BY $1,500.00",
        "$1,235.01 MUST HIT BY $1,500.00",
    ]


def test_a_sign_too_narrow_for_the_ceiling_shows_the_meter_alone() -> None:
    # "$1,234.56 MUST HIT BY $1,500.00" is 31 characters.
    assert shown(SignRules(pool_id=POOL, width=30), meter(1, 123_456)) == ["$1,234.56"]
    assert shown(SignRules(pool_id=POOL, width=31), meter(1, 123_456)) == [
        "$1,234.56 MUST HIT BY $1,500.00"
    ]


def test_a_pool_that_is_no_mystery_level_shows_its_meter_as_always() -> None:
    assert shown(SignRules(pool_id=POOL, width=64), meter(1, 123_456, ceiling=None)) == [
        "$1,234.56"
    ]


def test_a_hit_on_the_mystery_level_still_shows_first() -> None:
    sign = SignBehaviour(SignRules(pool_id=POOL, width=64, jackpot_hold_s=5.0))
    sign.update(meter(1, 149_990), 0.0)
    hit = HitAnnouncement(AT, 2, "t1/r-9/4/grand", POOL, "T1", 4, None, 149_995, False, False)
    assert [show.text for show in sign.update(hit, 1.0).shows] == ["JACKPOT T1 SEAT 4 $1,499.95"]
    assert [show.text for show in sign.update(meter(3, 100_000), 1.5).shows] == []
    assert [show.text for show in sign.wake(6.0).shows] == ["$1,000.00 MUST HIT BY $1,500.00"]
