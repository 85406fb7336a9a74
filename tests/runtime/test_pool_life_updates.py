"""The meter update a pool's life publishes, and the one a pool in play keeps.

A pool in play's update encodes byte for byte as before a pool had a life, so that every
signed meter and digest stays as it was (controller/meter_signature.py); a suspended or
retired pool's update says so and why, and a transfer says what it brought and from where
(44 Pa.B. 599: the signs and displays of both pools show a transfer).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import msgspec

from controller.ledger.pool import Pool, PoolTerms
from controller.ledger.state import LedgerState
from controller.runtime.updates import meter_update
from controller.web.snapshot import meter_bytes

AT = "2026-12-02T10:00:00.000Z"
TERMS = PoolTerms(seed_cents=100_000, rate_of_progression=Fraction(1, 10), paytable="p1")


def test_a_pool_in_play_publishes_the_meter_update_and_signed_bytes_it_always_did() -> None:
    pool = replace(Pool.open("floor", TERMS), meter=Fraction(123_456_7, 10))
    update = meter_update(pool, AT, 7, 1)
    assert msgspec.json.encode(update) == (
        b'{"type":"meter","at":"2026-12-02T10:00:00.000Z","seq":7,"pool_id":"floor",'
        b'"meter_cents":123456,"reserve_cents":0,"overflow_cents":0,"seed_cents":100000,'
        b'"epoch":1}'
    )
    assert meter_bytes("k1", update) == (
        b'jackpotd meter v2\n{"at":"2026-12-02T10:00:00.000Z","epoch":1,"key_id":"k1",'
        b'"meter_cents":123456,"overflow_cents":0,"pool":"floor","reserve_cents":0,'
        b'"seed_cents":100000,"seq":7,"v":2}'
    )


def test_68_iac_2_6_33_a_suspended_pool_publishes_its_status_and_reason_and_signs_them() -> None:
    pool = replace(Pool.open("floor", TERMS), status="suspended", status_reason="sign dark")
    update = meter_update(pool, AT, 8, 0)
    assert (update.status, update.status_reason, update.meter_cents) == (
        "suspended", "sign dark", 100_000,
    )  # fmt: skip
    assert b'"status":"suspended","status_reason":"sign dark"' in meter_bytes("k1", update)
    assert update.transferred_in_cents is msgspec.UNSET


def test_44_pa_b_599_a_transfer_names_both_pools() -> None:
    source = replace(
        Pool.open("floor", TERMS), meter=Fraction(0), status="suspended",
        status_reason="transferred to annex: table removed",
    )  # fmt: skip
    target = replace(Pool.open("annex", TERMS), transferred_in=Fraction(250_000_5, 10))
    state = replace(LedgerState(), pools={"floor": source, "annex": target})
    moved = meter_update(target, AT, 9, 0, state)
    assert (moved.transferred_in_cents, moved.transferred_from) == (250_000, "floor")
    assert moved.status is msgspec.UNSET
    left = meter_update(source, AT, 9, 0, state)
    assert left.status_reason == "transferred to annex: table removed"
