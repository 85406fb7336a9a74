"""Alpha sign frames, byte for byte: memory configuration, TEXT file and STRING file writes.

The expected bytes are written out by hand from the frame layout of the Alpha Sign
Communications Protocol (9708-8061, section 5.1; commands in section 6), checksums included,
and every frame is also read back by :func:`parse_frame`, a decoder written here from that
layout alone (it shares no code with :mod:`drivers.signs.alpha`). The pty test reuses it
through :class:`FrameStream`.
"""

from __future__ import annotations

import pytest
from support.drivers.alpha_sign import (
    MEMORY,
    STRING,
    TEXT,
    FileEntry,
    TextFile,
    parse_frame,
    parse_memory,
    parse_string_file,
    parse_text_file,
)

from drivers.signs.alpha import (
    AlphaProtocolError,
    MemoryEntry,
    SignLayout,
    checksum,
    decode,
    encode_packet,
    sign_text,
)

# --- an independent decoder, from the frame layout ------------------------------------------


# --- byte-exact frames ----------------------------------------------------------------------

"""Default layout: TEXT file A (unlocked, 20H bytes, always), STRING file 1 (locked, 40H)."""
"""TEXT file A: ESC, position fill ('0'), mode hold ('b'), call STRING (10H) '1'."""
"""STRING file 1 holding $12,345.67."""


def test_memory_configuration_is_byte_exact() -> None:
    assert SignLayout().configure_memory() == MEMORY
    frame = parse_frame(MEMORY)
    assert (frame.type_code, frame.address, frame.command) == ("Z", "00", "E")
    assert parse_memory(frame) == [
        FileEntry("A", "A", "U", 0x20, "FF00"),
        FileEntry("1", "B", "L", 0x40, "0000"),
    ]


def test_text_file_calls_the_string_file_byte_exact() -> None:
    assert SignLayout().write_text() == TEXT
    assert parse_text_file(parse_frame(TEXT)) == TextFile("A", b"0", b"b", "1")


def test_string_file_write_is_byte_exact() -> None:
    assert SignLayout().write_string("$12,345.67") == STRING
    assert parse_string_file(parse_frame(STRING)) == ("1", "$12,345.67")


def test_setup_frames_are_memory_then_text() -> None:
    assert SignLayout().setup_frames() == (MEMORY, TEXT)


def test_checksum_is_the_16_bit_sum_from_stx_through_etx_by_hand() -> None:
    # STRING: 02 47 31 24 31 32 2C 33 34 35 2E 36 37 03
    by_hand = 0x02 + 0x47 + 0x31 + 0x24 + 0x31 + 0x32 + 0x2C + 0x33 + 0x34 + 0x35 + 0x2E
    by_hand += 0x36 + 0x37 + 0x03
    assert by_hand == 0x0267
    assert checksum(b"\x02G1$12,345.67\x03") == b"0267"
    # The sum wraps at 16 bits; digits are upper case.
    assert checksum(bytes([0xFF]) * 300) == b"2AD4"  # 76500 - 65536 = 0x2AD4
    assert checksum(b"\x02" + b"~" * 123 + b"\x03") == f"{(2 + 126 * 123 + 3):04X}".encode()


def test_address_type_labels_position_and_mode_are_configurable() -> None:
    layout = SignLayout(
        type_code="f",
        address="1F",
        text_label="B",
        string_label="2",
        string_size=125,
        position="middle",
        mode="rotate",
    )
    memory, text = layout.setup_frames()
    assert memory == (
        b"\x00\x00\x00\x00\x00\x01f1F\x02E$BAU0020FF002BL007D0000\x03" + _sum(memory) + b"\x04"
    )
    frame = parse_frame(memory)
    assert (frame.type_code, frame.address) == ("f", "1F")
    assert parse_memory(frame) == [
        FileEntry("B", "A", "U", 0x20, "FF00"),
        FileEntry("2", "B", "L", 125, "0000"),
    ]
    assert text == b"\x00\x00\x00\x00\x00\x01f1F\x02AB\x1b a\x102\x03" + _sum(text) + b"\x04"
    assert parse_text_file(parse_frame(text)) == TextFile("B", b" ", b"a", "2")
    string = layout.write_string("CLOSED")
    assert string == b"\x00\x00\x00\x00\x00\x01f1F\x02G2CLOSED\x03" + _sum(string) + b"\x04"


def _sum(frame: bytes) -> bytes:
    """The checksum field of a frame, recomputed by hand from its STX..ETX block."""
    block = frame[frame.index(b"\x02") : frame.index(b"\x03") + 1]
    return f"{sum(block) % 65536:04X}".encode()


def test_text_is_printable_ascii_and_cut_to_the_string_size() -> None:
    layout = SignLayout(string_size=12)
    assert parse_string_file(parse_frame(layout.write_string("€1,000\tOK\x04"))) == (
        "1",
        "?1,000?OK?",
    )
    assert parse_string_file(parse_frame(layout.write_string("JACKPOT T1 SEAT 3 $5,000.00")))[
        1
    ] == ("JACKPOT T1 S")
    assert sign_text("ab\x10c", 10) == b"ab?c"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"address": "0g"}, "address"),
        ({"address": "000"}, "address"),
        ({"address": "1f"}, "address"),
        ({"type_code": "ZZ"}, "type code"),
        ({"type_code": " "}, "type code"),
        ({"text_label": "0"}, "label"),
        ({"string_label": "?"}, "label"),
        ({"string_label": "v"}, "label"),
        ({"text_label": "A", "string_label": "A"}, "different labels"),
        ({"string_size": 0}, "string size"),
        ({"string_size": 126}, "string size"),
        ({"mode": "sparkle"}, "mode"),
        ({"position": "centre"}, "position"),
    ],
)
def test_layouts_the_protocol_cannot_carry_are_refused(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(AlphaProtocolError, match=message):
        SignLayout(**fields)  # type: ignore[arg-type]


def test_memory_entries_and_packets_refuse_what_does_not_fit() -> None:
    with pytest.raises(AlphaProtocolError, match="STRING"):
        MemoryEntry("1", "string", 200).encode()
    with pytest.raises(AlphaProtocolError, match="four hex"):
        MemoryEntry("A", "text", 0x10000).encode()
    with pytest.raises(AlphaProtocolError, match="framing byte"):
        encode_packet("G", b"1ab\x03cd")
    with pytest.raises(AlphaProtocolError, match="command"):
        encode_packet("GG", b"1")


# --- the module's own decoder ---------------------------------------------------------------


def test_decode_reads_back_what_is_encoded_and_resyncs_on_garbage() -> None:
    stream = b"junk\x00\x00" + MEMORY + b"\xff" + TEXT + STRING
    packets = []
    while stream:
        used, packet = decode(stream)
        if used == 0:
            break
        stream = stream[used:]
        if packet is not None:
            packets.append(packet)
    assert stream == b""
    assert [(p.command, p.data, p.checksum_ok) for p in packets] == [
        ("E", b"$AAU0020FF001BL00400000", True),
        ("A", b"A\x1b0b\x101", True),
        ("G", b"1$12,345.67", True),
    ]
    assert {(p.type_code, p.address) for p in packets} == {("Z", "00")}


def test_decode_waits_for_the_rest_and_flags_a_bad_checksum() -> None:
    assert decode(STRING[:-3]) == (5, None)  # the sync NULs are used; the rest waits
    used, packet = decode(STRING.replace(b"0267", b"0268"))
    assert used == len(STRING)
    assert packet is not None
    assert packet.checksum == "0268"
    assert packet.checksum_ok is False
    used, packet = decode(b"\x01Z00\x02G1$5.00\x04")  # no ETX: sent without a checksum
    assert packet is not None
    assert (packet.data, packet.checksum, packet.checksum_ok) == (b"1$5.00", None, None)
    assert decode(b"\x01Z00X") == (1, None)  # an SOH that opens no header is skipped
