"""A pool's life on ``meter/<pool>``: what a sign station or display off the box hears.

A suspended or retired pool's retained meter carries its status and reason, signed with it, so
a sign station's sign shows SUSPENDED or CLOSED as a sign on the controller's own box does
(68 IAC 2-6-33; Mich. Admin. Code R 432.1838(4)); a pool in play's payload, signed or not, is
the one it always was (docs/mqtt.md, "meter/<pool>").
"""

from __future__ import annotations

import json

import msgspec
from support.drivers.mqtt_tables import TOPICS, settings_for
from support.drivers.sign_station import AT, KEYS, POOL, SIGNER, meter

from controller.outputs import MeterUpdate
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.outgoing import meter_payload
from drivers.signs.behaviour import SignBehaviour
from drivers.signs.rules import SignRules


def test_a_pool_in_play_publishes_the_meter_payload_it_always_did() -> None:
    assert meter_payload(meter(2_523_417, 48_121, epoch=3)) == (
        b'{"v":1,"pool":"main","meter_cents":2523417,"reserve_cents":1000,"overflow_cents":0,'
        b'"seed_cents":50000,"at":"' + AT.encode() + b'","seq":48121,"epoch":3}'
    )
    signed = json.loads(meter_payload(meter(5_00, 9, epoch=0), SIGNER))
    assert (
        not {"status", "status_reason", "transferred_in_cents", "must_hit_by_cents"} & signed.keys()
    )


def test_68_iac_2_6_33_a_sign_station_shows_a_suspended_pool_from_its_signed_meter() -> None:
    suspended = msgspec.structs.replace(
        meter(5_00, 10, epoch=0), status="suspended", status_reason="sign dark"
    )
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL], keys=KEYS)
    heard = follower.take(TOPICS.meter(POOL), meter_payload(suspended, SIGNER))
    assert isinstance(heard, MeterUpdate)
    assert (heard.status, heard.status_reason) == ("suspended", "sign dark")
    sign = SignBehaviour(SignRules(pool_id=POOL, width=64))
    assert [show.text for show in sign.update(heard, 0.0).shows] == ["SUSPENDED sign dark"]
    # The reason is signed: changed on the way, the meter is not verified and not applied.
    forged = meter_payload(suspended, SIGNER).replace(b"sign dark", b"sign fine")
    assert follower.take(TOPICS.meter(POOL), forged) is None
    assert follower.unverified == 1


def test_r432_1838_4_a_retired_pool_shows_closed_on_a_sign_station() -> None:
    retired = msgspec.structs.replace(
        meter(0, 11, epoch=0), status="retired", status_reason="orphaned: floor closed"
    )
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL], keys=KEYS)
    heard = follower.take(TOPICS.meter(POOL), meter_payload(retired, SIGNER))
    assert isinstance(heard, MeterUpdate)
    sign = SignBehaviour(SignRules(pool_id=POOL))
    assert [show.text for show in sign.update(heard, 0.0).shows] == ["CLOSED"]


def test_a_mystery_levels_ceiling_is_signed_with_its_meter_for_the_sign_station() -> None:
    # The ceiling is public (the trigger never leaves the signer, docs/rules.md § 10): it comes
    # with the meter, under its signature, and only on a mystery level.
    grand = msgspec.structs.replace(meter(1_234_56, 12, epoch=0), must_hit_by_cents=1_500_00)
    payload = meter_payload(grand, SIGNER)
    assert json.loads(payload)["must_hit_by_cents"] == 1_500_00
    follower = MeterFollower(settings_for(1883), client_id="sign-1", pools=[POOL], keys=KEYS)
    heard = follower.take(TOPICS.meter(POOL), payload)
    assert isinstance(heard, MeterUpdate)
    assert heard.must_hit_by_cents == 1_500_00
    sign = SignBehaviour(SignRules(pool_id=POOL, width=64))
    assert [show.text for show in sign.update(heard, 0.0).shows] == [
        "$1,234.56 MUST HIT BY $1,500.00"
    ]
    # A ceiling raised on the way (a sign made to promise more) is not the controller's.
    forged = payload.replace(b"150000", b"990000")
    assert follower.take(TOPICS.meter(POOL), forged) is None
    assert follower.unverified == 1
