"""What an Alpha sign shows of its pool's life (docs/signs.md, "A pool's life").

A suspended pool keeps its meters and refuses wagers, with the reason on its signs
(68 IAC 2-6-33): SUSPENDED instead of the meter, and the reason when the whole text fits the
sign's STRING file; a retired pool is closed (Mich. Admin. Code R 432.1838(4)): CLOSED. The
state machine on a fake clock, as tests/drivers/signs/test_sign_behaviour.py drives it.
"""

from __future__ import annotations

from support.drivers.sign_shows import shown

from controller.outputs import MeterUpdate
from drivers.signs.rules import SignRules
from drivers.signs.serial_sign import AlphaSignSettings

POOL = "fortune"
AT = "2025-01-01T00:00:00.000000Z"


def meter(seq: int, cents: int, **life: str) -> MeterUpdate:
    return MeterUpdate(AT, seq, POOL, cents, 0, 0, 100_000, **life)  # type: ignore[arg-type]


def test_68_iac_2_6_33_a_suspended_pool_shows_suspended_and_its_reason_not_its_meter() -> None:
    rules = SignRules(pool_id=POOL, width=64)
    suspended = meter(2, 123_456, status="suspended", status_reason="sign dark")
    resumed = meter(3, 123_456)
    assert shown(rules, meter(1, 123_456), suspended, resumed) == [
        "$1,234.56",
        "SUSPENDED sign dark",
        "$1,234.56",
    ]


def test_68_iac_2_6_33_a_reason_too_long_for_the_sign_leaves_suspended_alone() -> None:
    reason = "transferred to annex: table T1 removed from the pit for repair"
    suspended = meter(2, 0, status="suspended", status_reason=reason)
    assert shown(SignRules(pool_id=POOL, width=32), suspended) == ["SUSPENDED"]
    assert shown(SignRules(pool_id=POOL), suspended) == [f"SUSPENDED {reason}"]


def test_r432_1838_4_a_retired_pool_shows_closed() -> None:
    retired = meter(2, 0, status="retired", status_reason="orphaned: floor closed")
    assert shown(SignRules(pool_id=POOL, width=64), meter(1, 500), retired) == ["$5.00", "CLOSED"]
    custom = SignRules(pool_id=POOL, closed_text="NO PLAY")
    assert shown(custom, retired) == ["NO PLAY"]


def test_an_alpha_signs_width_is_its_string_file() -> None:
    settings = AlphaSignSettings(name="pit", url="/dev/null", pool_id=POOL, string_size=40)
    assert settings.rules().width == 40
