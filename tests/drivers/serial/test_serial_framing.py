"""Framing and payloads of the reference serial protocol (docs/architecture.md).

The CRC is checked against its published check value and an independent bitwise
implementation; the framer against every malformed case we know of, and by hypothesis against
arbitrary bytes and frames buried in arbitrary noise. The payload decoder is checked field by
field, including the NAK reasons a device will see.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.events import BetSensed, BetsLocked, CardDealt, DealComplete, RoundVoided
from drivers.serial.framing import (
    BAD_CRC,
    GARBAGE,
    MAX_PAYLOAD,
    OVERSIZE,
    Frame,
    FrameError,
    FrameReader,
    crc16,
    decode,
    encode_frame,
    scan,
)
from drivers.serial.protocol import (
    Heartbeat,
    ProtocolError,
    ack,
    decode_payload,
    nak,
    parse_header,
)

AT = "2026-11-29T15:00:00.000Z"
BET = "BET,shoe-1,42,3,progressive,1,100"


def reference_crc(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit, straight from its definition."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def frame_with_crc(payload: bytes, crc: bytes) -> bytes:
    return b"$" + payload + b"*" + crc + b"\r\n"


def read_all(data: bytes, chunk: int = 4096) -> list[Frame | FrameError]:
    reader = FrameReader()
    out: list[Frame | FrameError] = []
    for start in range(0, len(data), chunk):
        out += reader.feed(data[start : start + chunk])
    return out + reader.flush()


payload_text = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="$*"),
    max_size=MAX_PAYLOAD,
)


# --- CRC -----------------------------------------------------------------------------------


def test_crc_check_value() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


@given(st.binary(max_size=300))
def test_crc_matches_the_bitwise_definition(data: bytes) -> None:
    assert crc16(data) == reference_crc(data)


# --- encoding and round trips --------------------------------------------------------------


def test_encode_frame_layout() -> None:
    frame = encode_frame("123456789")
    assert frame == b"$123456789*29B1\r\n"
    assert decode(frame) == (len(frame), Frame("123456789"))


def test_lowercase_crc_is_accepted() -> None:
    frame = encode_frame(BET).lower().replace(b"bet", b"BET")
    assert decode(frame) == (len(frame), Frame(BET))


@pytest.mark.parametrize("payload", ["a$b", "a*b", "tab\there", "caf\u00e9", "x" * 257])
def test_encode_refuses_what_cannot_be_framed(payload: str) -> None:
    with pytest.raises(ValueError, match="payload"):
        encode_frame(payload)


@given(payload_text)
def test_round_trip(payload: str) -> None:
    frame = encode_frame(payload)
    assert decode(frame) == (len(frame), Frame(payload))
    assert read_all(frame, chunk=1) == [Frame(payload)]


def test_longest_payload_is_a_frame_and_one_more_byte_is_oversize() -> None:
    longest = "x" * MAX_PAYLOAD
    assert read_all(encode_frame(longest)) == [Frame(longest)]
    data = b"x" * (MAX_PAYLOAD + 1)
    too_long = frame_with_crc(data, b"%04X" % crc16(data))
    [notice] = read_all(too_long + encode_frame(BET))[:1]
    assert isinstance(notice, FrameError)
    assert notice.reason == OVERSIZE
    assert notice.length == len(too_long)
    assert read_all(too_long + encode_frame(BET))[1:] == [Frame(BET)]


def test_decode_needs_more_bytes_for_a_partial_frame() -> None:
    frame = encode_frame(BET)
    for cut in range(1, len(frame)):
        assert decode(frame[:cut]) == (0, None), cut


def test_reader_holds_at_most_one_frame() -> None:
    reader = FrameReader()
    assert reader.feed(b"$" + b"x" * 200) == []
    assert reader.buffered == 201
    reader.feed(b"x" * 1000)
    assert reader.buffered < MAX_PAYLOAD + 8


# --- malformed input -----------------------------------------------------------------------

GOOD = encode_frame(BET)
BAD_CRC_FRAME = frame_with_crc(BET.encode(), b"%04X" % (crc16(BET.encode()) ^ 1))


@pytest.mark.parametrize(
    ("data", "reason", "skipped"),
    [
        pytest.param(BAD_CRC_FRAME, BAD_CRC, len(BAD_CRC_FRAME), id="bad-crc"),
        pytest.param(b"$BET,1,2\r\n", GARBAGE, 10, id="missing-star"),
        pytest.param(b"$BET,1,2*12G4\r\n", GARBAGE, 15, id="non-hex-crc"),
        pytest.param(b"$BET,1,2*123\r\n", GARBAGE, 14, id="short-crc"),
        pytest.param(b"$BET,1,2*12345\r\n", GARBAGE, 16, id="long-crc"),
        pytest.param(b"$BET,1,2*1234\n", GARBAGE, 14, id="lf-only"),
        pytest.param(b"$BET,1,\x002*1234\r\n", GARBAGE, 16, id="control-byte"),
        pytest.param(b"$BET,\xff*1234\r\n", GARBAGE, 13, id="high-byte"),
        pytest.param(b"noise in the line", GARBAGE, 17, id="plain-garbage"),
        pytest.param(b"$BET,1", GARBAGE, 6, id="cut-off-by-a-new-frame"),
    ],
)
def test_malformed_input_is_skipped_and_the_next_frame_recovered(
    data: bytes, reason: str, skipped: int
) -> None:
    for chunk in (4096, 1):
        assert read_all(data + GOOD, chunk) == [
            FrameError(reason, skipped, data[:64]),
            Frame(BET),
        ]


def test_bad_crc_is_consumed_whole_by_decode() -> None:
    assert decode(BAD_CRC_FRAME + GOOD) == (len(BAD_CRC_FRAME), None)
    used, notice = scan(BAD_CRC_FRAME)
    assert used == len(BAD_CRC_FRAME)
    assert isinstance(notice, FrameError)
    assert notice.reason == BAD_CRC


def test_garbage_is_skipped_up_to_the_next_dollar() -> None:
    assert decode(b"abc" + GOOD) == (3, None)
    assert decode(b"abc") == (3, None)


def test_a_dollar_inside_garbage_starts_a_new_attempt() -> None:
    data = b"xx$yy$zz\r\n" + GOOD + b"$$" + GOOD
    assert read_all(data) == [
        FrameError(GARBAGE, 10, b"xx$yy$zz\r\n"),
        Frame(BET),
        FrameError(GARBAGE, 2, b"$$"),
        Frame(BET),
    ]


def test_garbage_between_frames_is_one_run_per_gap() -> None:
    noise = b"\x00\xff$$junk$*zz\r\n"
    data = GOOD + noise + BAD_CRC_FRAME + noise + noise + GOOD + noise
    items = read_all(data, chunk=1)
    assert items == [
        Frame(BET),
        FrameError(GARBAGE, len(noise), noise),
        FrameError(BAD_CRC, len(BAD_CRC_FRAME), BAD_CRC_FRAME),
        FrameError(GARBAGE, 2 * len(noise), noise + noise),
        Frame(BET),
        FrameError(GARBAGE, len(noise), noise),
    ]


def test_frames_split_across_chunks_at_every_point() -> None:
    data = GOOD + encode_frame("HB,shoe-1,43")
    for cut in range(len(data) + 1):
        reader = FrameReader()
        items = reader.feed(data[:cut]) + reader.feed(data[cut:]) + reader.flush()
        assert items == [Frame(BET), Frame("HB,shoe-1,43")], cut


def test_notice_keeps_a_bounded_preview() -> None:
    [notice] = read_all(b"z" * 1000)
    assert notice == FrameError(GARBAGE, 1000, b"z" * 64)
    assert notice.describe() == "1000 bytes: " + "z" * 64 + "..."


# --- properties ----------------------------------------------------------------------------


# Random bytes rarely hold a "$" followed by anything frame-like; these do, often.
line_noise = st.lists(
    st.sampled_from([b"$", b"*", b"\r", b"\n", b"\r\n", b"A", b",", b"0", b"F", b"\x00", b"\xff"])
    | st.sampled_from([GOOD, BAD_CRC_FRAME, GOOD[:9], GOOD[9:], b"*29B1\r\n", b"x" * 250]),
    max_size=60,
).map(b"".join)


@given(st.binary(max_size=2000) | line_noise, st.integers(min_value=1, max_value=64))
def test_any_bytes_never_crash_the_reader_and_are_all_accounted_for(
    data: bytes, chunk: int
) -> None:
    items = read_all(data, chunk)
    framed = sum(len(encode_frame(i.payload)) for i in items if isinstance(i, Frame))
    skipped = sum(i.length for i in items if isinstance(i, FrameError))
    assert framed + skipped == len(data)
    assert all(len(i.preview) <= 64 for i in items if isinstance(i, FrameError))


@given(
    st.lists(st.tuples(st.binary(max_size=40), payload_text), max_size=12),
    st.binary(max_size=40),
    st.integers(min_value=1, max_value=50),
)
def test_frames_buried_in_garbage_are_all_recovered_in_order(
    parts: list[tuple[bytes, str]], tail: bytes, chunk: int
) -> None:
    # Noise ending in the middle of a would-be frame (a "$" followed by printable bytes)
    # would swallow the next frame's "$" and the frame with it, as it should: terminate it.
    data = b"".join(noise + b"\r\n" + encode_frame(payload) for noise, payload in parts) + tail
    frames = [i.payload for i in read_all(data, chunk) if isinstance(i, Frame)]
    # Garbage may itself contain a valid frame by chance: the sent ones are a subsequence.
    expected = [payload for _noise, payload in parts]
    remaining = iter(frames)
    assert all(any(got == want for got in remaining) for want in expected)


# --- payloads ------------------------------------------------------------------------------


def test_bet_decodes_to_bet_sensed() -> None:
    assert decode_payload(BET, "T1", AT) == BetSensed(
        "T1/shoe-1/42",
        AT,
        "T1",
        "shoe-1",
        42,
        seat=3,
        spot="progressive",
        present=True,
        amount_cents=100,
    )
    assert decode_payload("BET,s,1,6,ace-high,0", "T1", AT) == BetSensed(
        "T1/s/1", AT, "T1", "s", 1, seat=6, spot="ace-high", present=False, amount_cents=0
    )


def test_each_message_type_decodes() -> None:
    assert decode_payload("LOCK,dealer,7,R-0001", "T1", AT) == BetsLocked(
        "T1/dealer/7", AT, "T1", "dealer", 7, round_id="R-0001"
    )
    assert decode_payload("CARD,shoe,8,R-0001,0,Jk", "T1", AT) == CardDealt(
        "T1/shoe/8", AT, "T1", "shoe", 8, round_id="R-0001", position=0, card="Jk"
    )
    assert decode_payload("CARD,shoe,9,R-0001,6,Td", "T1", AT) == CardDealt(
        "T1/shoe/9", AT, "T1", "shoe", 9, round_id="R-0001", position=6, card="Td"
    )
    assert decode_payload("DONE,shoe,10,R-0001", "T1", AT) == DealComplete(
        "T1/shoe/10", AT, "T1", "shoe", 10, round_id="R-0001"
    )
    assert decode_payload("VOID,shoe,11,R-0001", "T1", AT) == RoundVoided(
        "T1/shoe/11",
        AT,
        "T1",
        round_id="R-0001",
        by="device shoe",
        reason="misdeal",
        refund_contributions=True,
    )
    assert decode_payload("VOID,shoe,12,R-0001,card exposed", "T1", AT) == RoundVoided(
        "T1/shoe/12",
        AT,
        "T1",
        round_id="R-0001",
        by="device shoe",
        reason="card exposed",
        refund_contributions=True,
    )
    assert decode_payload("HB,shoe,0013", "T1", AT) == Heartbeat("T1", "shoe", 13)


def test_at_defaults_to_now_in_utc() -> None:
    event = decode_payload("LOCK,d,1,R1", "T1")
    assert isinstance(event, BetsLocked)
    assert event.at.endswith("Z")
    assert len(event.at) == len("2026-11-29T15:00:00.000Z")


@pytest.mark.parametrize(
    ("payload", "reason", "device", "seq"),
    [
        ("", "unknown-type", None, None),
        ("PING,d,1", "unknown-type", "d", 1),
        ("BET,d", "field-count", None, None),
        ("BET,d/x,1,1,bonus,1", "bad-device", None, 1),
        ("BET,,1,1,bonus,1", "bad-device", None, 1),
        ("BET,d,-1,1,bonus,1", "bad-seq", "d", None),
        ("BET,d,+1,1,bonus,1", "bad-seq", "d", None),
        ("BET,d,4294967296,1,bonus,1", "bad-seq", "d", None),
        ("BET,d,1,0,bonus,1", "bad-seat", "d", 1),
        ("BET,d,1,1,jackpot,1", "bad-spot", "d", 1),
        ("BET,d,1,1,bonus,yes", "bad-present", "d", 1),
        ("BET,d,1,1,bonus,1,5.00", "bad-amount", "d", 1),
        ("BET,d,1,1,bonus", "field-count", "d", 1),
        ("BET,d,1,1,bonus,1,100,7", "field-count", "d", 1),
        ("LOCK,d,1,R 1", "bad-round", "d", 1),
        ("LOCK,d,1", "field-count", "d", 1),
        ("CARD,d,1,R1,100,As", "bad-position", "d", 1),
        ("CARD,d,1,R1,1,Zz", "bad-card", "d", 1),
        ("CARD,d,1,R1,1,", "bad-card", "d", 1),
        ("DONE,d,1,", "bad-round", "d", 1),
        ("VOID,d,1,R1,a,b", "field-count", "d", 1),
        ("CARD,d,1,R1,1,td", "bad-card", "d", 1),
        ("HB,d,1,extra", "bad-last", "d", 1),
        ("HB,d,1,5,6", "field-count", "d", 1),
    ],
)
def test_invalid_payloads_name_a_reason_and_what_could_be_read(
    payload: str, reason: str, device: str | None, seq: int | None
) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_payload(payload, "T1", AT)
    assert (caught.value.reason, caught.value.device, caught.value.seq) == (reason, device, seq)


def test_header_and_answers() -> None:
    header = parse_header(BET)
    assert (header.kind, header.device, header.seq) == ("BET", "shoe-1", 42)
    assert header.fields == ("3", "progressive", "1", "100")
    assert ack("shoe-1", 42) == "ACK,shoe-1,42"
    assert nak("shoe-1", 42, "bad-card") == "NAK,shoe-1,42,bad-card"
    assert encode_frame(ack("shoe-1", 42)) == b"$ACK,shoe-1,42*%04X\r\n" % crc16(b"ACK,shoe-1,42")
