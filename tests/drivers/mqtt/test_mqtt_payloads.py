"""The MQTT topic tree and payloads, without a broker: what decodes to what, what is refused."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete, RoundVoided
from controller.outputs import ControllerUpdate, HitAnnouncement, MeterUpdate, TableUpdate
from controller.rules.spots import Spot
from drivers.mqtt import json_objects, payloads
from drivers.mqtt.json_objects import MAX_PAYLOAD, PayloadError
from drivers.mqtt.outgoing import (
    controller_status_payload,
    decode_hit,
    decode_meter,
    decode_table_state,
    hit_payload,
    meter_payload,
    table_state_payload,
)
from drivers.mqtt.payloads import (
    BetPayload,
    Heartbeat,
    decode_status,
    decode_table_event,
    table_status_event,
)
from drivers.mqtt.topics import TableEventTopic, TableStatusTopic, TopicError, Topics

if TYPE_CHECKING:
    from collections.abc import Callable

AT = "2025-01-02T03:04:05.678Z"


def decode(event_type: str, payload: object, table: str = "t1") -> object:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return decode_table_event(table, event_type, data, at=AT)


# Table events: each type decodes to its controller event, with the device's id.


def test_bet_decodes_to_bet_sensed() -> None:
    payload = {"v": 1, "device": "bs-1", "seq": 17, "seat": 3, "spot": "progressive"}
    event = decode("bet", payload | {"present": True, "amount_cents": 500})
    assert event == BetSensed(
        "t1/bs-1/17", AT, "t1", "bs-1", 17, seat=3, spot="progressive", present=True,
        amount_cents=500,
    )  # fmt: skip


def test_bet_amount_defaults_to_zero_and_removal_is_present_false() -> None:
    payload = {"v": 1, "device": "bs-1", "seq": 18, "seat": 6, "spot": "bonus", "present": False}
    event = decode("bet", payload)
    assert isinstance(event, BetSensed)
    assert (event.present, event.amount_cents, event.spot) == (False, 0, "bonus")


def test_lock_card_done_decode_with_the_round() -> None:
    lock = decode("lock", {"v": 1, "device": "dealer", "seq": 4, "round": "r-0042"})
    assert lock == BetsLocked("t1/dealer/4", AT, "t1", "dealer", 4, round_id="r-0042")
    card = decode(
        "card",
        {"v": 1, "device": "shoe", "seq": 9, "round": "r-0042", "position": 0, "card": "Jk"},
    )
    assert card == CardDealt(
        "t1/shoe/9", AT, "t1", "shoe", 9, round_id="r-0042", position=0, card="Jk"
    )
    done = decode("done", {"v": 1, "device": "shoe", "seq": 60, "round": "r-0042"})
    assert done == DealComplete("t1/shoe/60", AT, "t1", "shoe", 60, round_id="r-0042")


def test_void_decodes_to_round_voided_by_the_device() -> None:
    void = decode("void", {"v": 1, "device": "dealer", "seq": 5, "round": "r-7", "reason": "x"})
    assert void == RoundVoided(
        "t1/dealer/5",
        AT,
        "t1",
        round_id="r-7",
        by="device dealer",
        reason="x",
        refund_contributions=True,
    )
    default = decode("void", {"v": 1, "device": "dealer", "seq": 6, "round": "r-7"})
    assert isinstance(default, RoundVoided)
    assert default.reason == "misdeal"


def test_heartbeat_is_no_event() -> None:
    assert decode("heartbeat", {"v": 1, "device": "shoe", "seq": 61}) == Heartbeat("t1", "shoe", 61)


def test_a_heartbeat_carries_the_last_event_the_device_sent() -> None:
    beat = {"v": 1, "device": "shoe", "seq": 1061, "last": 60}
    assert decode("heartbeat", beat) == Heartbeat("t1", "shoe", 1061, 60)
    assert refused("heartbeat", {**beat, "last": -1}) == "bad-last"


def refused(event_type: str, payload: object) -> str:
    with pytest.raises(PayloadError) as raised:
        decode(event_type, payload)
    return raised.value.reason


# Hostile payloads (docs/faults.md, "Poison messages", "Duplicate keys").


@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 2000 + b"]" * 2000,
        b"{" * 5000,
        b'{"v":1,"device":"d","seq":1,"x":' + b"[" * 3000 + b"]" * 3000 + b"}",
        b'{"v":1,"device":"d","seq":1,"seat":1,"spot":"bonus","present":true,"amount_cents":'
        + b"9" * 4000
        + b"}",
    ],
    ids=["deep-array", "deep-object", "deep-field", "long-number"],
)
def test_whatever_the_decoder_raises_is_a_payload_error(payload: bytes) -> None:
    for event_type in ("bet", "lock", "heartbeat"):
        with pytest.raises(PayloadError):
            decode(event_type, payload)
    with pytest.raises(PayloadError):
        decode_status(payload)


def test_2000_nested_brackets_are_undecodable_not_a_recursion_error() -> None:
    assert refused("bet", b"[" * 2000 + b"]" * 2000) == "undecodable"


def test_a_key_given_twice_is_refused_not_read_as_its_last_value() -> None:
    head = b'{"v":1,"device":"bs","seq":1,"seat":1,"spot":"bonus","present":true,'
    assert refused("bet", head + b'"amount_cents":500,"amount_cents":100000000}') == (
        "duplicate-key"
    )
    assert refused("lock", b'{"v":1,"v":1,"device":"d","seq":1,"round":"r"}') == "duplicate-key"
    assert refused("heartbeat", b'{"v":1,"device":"d","device":"e","seq":1}') == "duplicate-key"


@pytest.mark.parametrize("reason", ["a\nCRITICAL forged", "x\u202ey", "nul\x00", "\u2028"])
def test_a_void_reason_is_one_line_of_text(reason: str) -> None:
    payload = {"v": 1, "device": "d", "seq": 1, "round": "r1", "reason": reason}
    assert refused("void", payload) == "bad-reason"


def test_time_defaults_to_the_controllers_clock() -> None:
    event = decode_table_event("t1", "done", b'{"v":1,"device":"s","seq":1,"round":"r"}')
    assert isinstance(event, DealComplete)
    assert event.at.endswith("Z")
    assert event.at[:2] == "20"


def test_payload_structs_encode_what_decodes() -> None:
    payload = BetPayload(v=1, device="bs", seq=1, seat=2, spot=Spot("ace-high"), present=True)
    event = decode("bet", msgspec.json.encode(payload))
    assert isinstance(event, BetSensed)
    assert (event.seat, event.spot, event.present) == (2, "ace-high", True)


# Malformed payloads: a PayloadError with a short reason and a detail that says what is wrong.

BET = {"v": 1, "device": "bs-1", "seq": 1, "seat": 1, "spot": "bonus", "present": True}
CARD = {"v": 1, "device": "shoe", "seq": 2, "round": "r1", "position": 1, "card": "As"}

MALFORMED = [
    ("bet", b"{", "bad-json", "truncated"),
    ("bet", b"\xff\xfe", "bad-json", "malformed"),
    ("bet", b"", "bad-json", "truncated"),
    ("bet", b"[1, 2]", "bad-payload", "JSON object"),
    ("bet", b'"online"', "bad-payload", "JSON object"),
    ("bet", {k: v for k, v in BET.items() if k != "v"}, "bad-version", '"v"'),
    ("bet", BET | {"v": 2}, "bad-version", "version 2 is not supported"),
    ("bet", BET | {"v": "1"}, "bad-version", "'1'"),
    ("bet", BET | {"v": True}, "bad-version", "True"),
    ("bet", {k: v for k, v in BET.items() if k != "seat"}, "missing-field", "`seat`"),
    ("bet", {k: v for k, v in BET.items() if k != "device"}, "missing-field", "`device`"),
    ("bet", BET | {"amount": 500}, "unknown-field", "`amount`"),
    ("bet", BET | {"seat": 0}, "bad-seat", ">= 1"),
    ("bet", BET | {"seat": 100}, "bad-seat", "<= 99"),
    ("bet", BET | {"seat": "3"}, "bad-seat", "Expected `int`"),
    ("bet", BET | {"spot": "main"}, "bad-spot", "'main'"),
    ("bet", BET | {"present": 1}, "bad-present", "Expected `bool`"),
    ("bet", BET | {"amount_cents": -1}, "bad-amount-cents", ">= 0"),
    ("bet", BET | {"amount_cents": 5.5}, "bad-amount-cents", "Expected `int`"),
    ("bet", BET | {"seq": -1}, "bad-seq", ">= 0"),
    ("bet", BET | {"seq": 2**32}, "bad-seq", "<="),
    ("bet", BET | {"device": "a/b"}, "bad-device", "regex"),
    ("bet", BET | {"device": ""}, "bad-device", "regex"),
    ("card", CARD | {"round": ""}, "bad-round", "regex"),
    ("card", CARD | {"round": "r 1"}, "bad-round", "regex"),
    ("card", CARD | {"position": 100}, "bad-position", "<= 99"),
    ("card", CARD | {"card": "Xx"}, "bad-card", "Xx"),
    ("card", CARD | {"card": 14}, "bad-card", "Expected `str`"),
    ("lock", {"v": 1, "device": "d", "seq": 1}, "missing-field", "`round`"),
    (
        "void",
        {"v": 1, "device": "d", "seq": 1, "round": "r", "reason": "x" * 201},
        "bad-reason",
        "",
    ),
    ("heartbeat", {"v": 1, "device": "d", "seq": 1, "round": "r"}, "unknown-field", "`round`"),
    ("bet", b" " * (MAX_PAYLOAD + 1), "too-large", str(MAX_PAYLOAD)),
    ("spin", BET, "unknown-type", "'spin'"),
]


@pytest.mark.parametrize(("event_type", "payload", "reason", "says"), MALFORMED)
def test_malformed_payload_is_refused_with_a_reason(
    event_type: str, payload: object, reason: str, says: str
) -> None:
    with pytest.raises(PayloadError) as caught:
        decode(event_type, payload)
    assert caught.value.reason == reason
    assert says in caught.value.detail
    assert str(caught.value).startswith(f"{reason}: ")


def outcome(event_type: str, data: bytes) -> str:
    """``ok``, or the reason of the PayloadError; any other exception fails the test."""
    try:
        decode_table_event("t1", event_type, data, at=AT)
    except PayloadError as error:
        return error.reason if error.detail else ""
    return "ok"


@given(st.binary(max_size=300))
def test_any_bytes_decode_or_raise_payload_error(data: bytes) -> None:
    for event_type in ("bet", "card", "heartbeat"):
        assert outcome(event_type, data)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from([*BET, *CARD, "round", "reason", "x"]), _JSON))
def test_any_json_object_decodes_or_raises_payload_error(value: dict[str, object]) -> None:
    data = json.dumps(value | {"v": 1}).encode()
    for event_type in ("bet", "lock", "card", "done", "void", "heartbeat"):
        assert outcome(event_type, data)


# Status payloads.


def test_status_payloads() -> None:
    assert decode_status(b"online") is True
    assert decode_status(b"offline") is False
    assert decode_status(b"offline\n") is False
    with pytest.raises(PayloadError, match="bad-status"):
        decode_status(b"ONLINE!")
    with pytest.raises(PayloadError, match="bad-status"):
        decode_status(b'{"v":1}')


def test_table_status_event() -> None:
    event = table_status_event("t1", online=False, event_id="t1/status/x/0", at=AT)
    assert (event.table_id, event.online, event.event_id) == ("t1", False, "t1/status/x/0")
    assert "last will" in event.reason
    assert table_status_event("t1", online=True, event_id="i", at=AT).online


# Controller payloads: every field, money in cents, the version.


def test_meter_payload_carries_the_epoch_beside_the_row() -> None:
    update = MeterUpdate(AT, 12, "main", 1_234_56, 500, 0, 100_000, epoch=3)
    data = meter_payload(update)
    assert json.loads(data) == {
        "v": 1, "pool": "main", "meter_cents": 123456, "reserve_cents": 500,
        "overflow_cents": 0, "seed_cents": 100000, "at": AT, "seq": 12, "epoch": 3,
    }  # fmt: skip
    decoded = decode_meter(data)
    assert (decoded.meter_cents, decoded.epoch, decoded.seq) == (123456, 3, 12)


def test_payloads_without_an_epoch_read_as_epoch_0() -> None:
    # What a controller before the epoch published (schema version 1 all the same).
    meter = decode_meter(
        b'{"v":1,"pool":"main","meter_cents":1,"reserve_cents":0,"overflow_cents":0,'
        b'"seed_cents":1,"at":"2025-06-01T21:14:03.118Z","seq":7}'
    )
    hit = decode_hit(
        b'{"v":1,"payout":"p","pool":"main","table":"t1","seat":1,"line":null,"amount_cents":1,'
        b'"pending":false,"tax_report":false,"at":"2025-06-01T21:14:03.118Z","seq":6}'
    )
    state = decode_table_state(b'{"v":1,"open":true,"reason":"x","at":"t","seq":0}')
    assert (meter.epoch, meter.seq, hit.epoch, state.epoch) == (0, 7, 0, 0)


def test_hit_payload_with_and_without_pool() -> None:
    hand = "As Ks Qs Js Ts Jk 2c"
    update = HitAnnouncement(
        AT, 40, "p-9", "main", "t3", 2, "royal-flush", 250_000, True, True, hand=hand, epoch=2
    )
    assert json.loads(hit_payload(update)) == {
        "v": 1, "payout": "p-9", "pool": "main", "table": "t3", "seat": 2,
        "line": "royal-flush", "amount_cents": 250000, "pending": True, "tax_report": True,
        "at": AT, "seq": 40, "hand": hand, "epoch": 2,
    }  # fmt: skip
    bonus = HitAnnouncement(AT, 41, "p-10", None, "t3", 1, None, 80_000, True, False)
    decoded = decode_hit(hit_payload(bonus))
    assert (decoded.pool, decoded.line, decoded.amount_cents) == (None, None, 80_000)


def test_table_state_and_controller_status_payloads() -> None:
    closed = decode_table_state(
        table_state_payload(TableUpdate(AT, 7, "t1", False, "offline", epoch=4))
    )
    assert (closed.v, closed.open, closed.reason, closed.seq, closed.epoch) == (
        1, False, "offline", 7, 4,
    )  # fmt: skip
    assert controller_status_payload(ControllerUpdate(AT, 0, online=True, reason="x")) == b"online"
    assert (
        controller_status_payload(ControllerUpdate(AT, 0, online=False, reason="x")) == b"offline"
    )


def test_controller_payload_of_another_version_is_refused() -> None:
    with pytest.raises(PayloadError, match="bad-version"):
        decode_meter(b'{"v":3,"pool":"main"}')


# Topics.

TOPICS = Topics("casino")


def test_topic_builders() -> None:
    assert TOPICS.prefix == "casino/jackpot/v1/"
    assert TOPICS.table_status("t1") == "casino/jackpot/v1/table/t1/status"
    assert TOPICS.table_event("t1", "bet") == "casino/jackpot/v1/table/t1/event/bet"
    assert TOPICS.table_command("t1", "state") == "casino/jackpot/v1/table/t1/cmd/state"
    assert TOPICS.controller_status("jackpotd") == "casino/jackpot/v1/controller/jackpotd/status"
    assert TOPICS.meter("main") == "casino/jackpot/v1/meter/main"
    assert TOPICS.hit("main") == "casino/jackpot/v1/meter/main/hit"
    assert TOPICS.hit(None) == "casino/jackpot/v1/meter/_/hit"
    assert TOPICS.table_event_filter == "casino/jackpot/v1/table/+/event/+"
    assert TOPICS.table_status_filter == "casino/jackpot/v1/table/+/status"
    assert Topics("casino/floor-2").meter("m") == "casino/floor-2/jackpot/v1/meter/m"


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda: TOPICS.meter("a/b"), "bad-pool"),
        (lambda: TOPICS.meter("+"), "bad-pool"),
        (lambda: TOPICS.meter("_"), "bad-pool"),
        (lambda: TOPICS.hit("#"), "bad-pool"),
        (lambda: TOPICS.table_status(""), "bad-table"),
        (lambda: TOPICS.table_event("t1", "spin"), "unknown-type"),
        (lambda: TOPICS.table_command("t1", "a/b"), "bad-command"),
        (lambda: Topics("casino/+"), "bad-site"),
        (lambda: Topics(""), "bad-site"),
        (lambda: Topics("a//b"), "bad-site"),
    ],
)
def test_topic_builders_refuse_bad_levels(build: Callable[[], object], reason: str) -> None:
    with pytest.raises(TopicError) as caught:
        build()
    assert caught.value.reason == reason


def test_topic_parse() -> None:
    parse = TOPICS.parse
    assert parse("casino/jackpot/v1/table/t1/event/bet") == TableEventTopic("t1", "bet")
    assert parse("casino/jackpot/v1/table/t1/event/spin") == TableEventTopic("t1", "spin")
    assert parse("casino/jackpot/v1/table/t-2/status") == TableStatusTopic("t-2")
    assert parse("casino/jackpot/v1/meter/main") is None
    assert parse("casino/jackpot/v1/table/t1/event/bet/x") is None
    assert parse("other/jackpot/v1/table/t1/status") is None
    with pytest.raises(TopicError, match="bad-table"):
        parse("casino/jackpot/v1/table//event/bet")
    with pytest.raises(TopicError, match="bad-table"):
        parse("casino/jackpot/v1/table/t\u00e9/status")


@given(st.text(max_size=40))
def test_parse_never_fails_but_with_topic_error(suffix: str) -> None:
    reason = "parsed"
    try:
        TOPICS.parse("casino/jackpot/v1/" + suffix)
    except TopicError as error:
        reason = error.reason
    assert reason in {"parsed", "bad-table"}


# The one-step decoding of valid payloads gives what the step-by-step reading gives.


def careful(event_type: str, data: bytes) -> object:
    """The payload read step by step only (JSON, version, device and seq, the type's fields)."""
    kind = payloads._EVENT_TYPES[event_type]
    try:
        value = json_objects.decode_object(data)
        json_objects.convert(value, payloads._HeadFields)
        payload = json_objects.convert(value, kind.payload)
        return kind.event(payloads._Head("t1", payload.device, payload.seq, AT), payload)
    except PayloadError as error:
        return (error.reason, error.detail)


def quick(event_type: str, data: bytes) -> object:
    try:
        return decode_table_event("t1", event_type, data, at=AT)
    except PayloadError as error:
        return (error.reason, error.detail)


VALID: dict[str, dict[str, object]] = {
    "bet": {"seat": 3, "spot": "progressive", "present": True, "amount_cents": 500},
    "lock": {"round": "r-0042"},
    "card": {"round": "r-0042", "position": 0, "card": "As"},
    "done": {"round": "r-0042"},
    "void": {"round": "r-0042", "reason": "misdeal"},
    "heartbeat": {},
}
ODD_VALUES: st.SearchStrategy[object] = st.sampled_from(
    [None, True, 1.0, -1, 0, 2**32, "", " ", "x" * 201, "Zz", "envy", [], {}, 10**12 + 1]
)
FIELDS = st.sampled_from(
    ["v", "device", "seq", "seat", "spot", "present", "amount_cents", "round", "position",
     "card", "reason", "extra"]
)  # fmt: skip
CHANGES = st.lists(st.tuples(FIELDS, st.none() | ODD_VALUES), max_size=2)
"""Up to two changes to a valid payload: a field set to an odd value, or removed (None)."""


@given(st.sampled_from(sorted(VALID)), CHANGES)
def test_a_payload_decodes_in_one_step_exactly_as_read_step_by_step(
    event_type: str, changes: list[tuple[str, object]]
) -> None:
    value: dict[str, object] = {"v": 1, "device": "shoe", "seq": 9} | VALID[event_type]
    for name, new in changes:
        if new is None:
            value.pop(name, None)
        else:
            value[name] = new
    data = json.dumps(value).encode()
    assert quick(event_type, data) == careful(event_type, data)
