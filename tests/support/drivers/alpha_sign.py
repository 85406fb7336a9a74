"""The Alpha sign protocol read from its specification, apart from the driver: frames, files."""

from __future__ import annotations

import re
from dataclasses import dataclass

FRAME = re.compile(
    rb"\x00{5}\x01(?P<type>[\x21-\x7e])(?P<address>[0-9A-F?]{2})"
    rb"(?P<block>\x02(?P<command>[\x20-\x7e])(?P<data>[^\x00-\x04]*)\x03)"
    rb"(?P<checksum>[0-9A-F]{4})\x04"
)


@dataclass(frozen=True)
class Frame:
    """One Alpha packet: header fields, command and data, checksum verified."""

    type_code: str
    address: str
    command: str
    data: bytes


def parse_frame(raw: bytes) -> Frame:
    """Exactly one packet (NUL x5 SOH type addr STX cmd data ETX checksum EOT), or fail."""
    match = FRAME.fullmatch(raw)
    assert match is not None, f"not an Alpha packet: {raw!r}"
    total = 0
    for byte in match["block"]:
        total += byte
    assert match["checksum"] == f"{total % 65536:04X}".encode(), f"bad checksum in {raw!r}"
    return Frame(
        match["type"].decode(), match["address"].decode(), match["command"].decode(), match["data"]
    )


class FrameStream:
    """Cuts a byte stream into packets (every byte must belong to one) and parses each."""

    def __init__(self) -> None:
        self.buffer = b""
        self.raw: list[bytes] = []

    def feed(self, data: bytes) -> list[Frame]:
        """The packets completed by ``data``."""
        self.buffer += data
        frames = []
        while (end := self.buffer.find(b"\x04")) >= 0:
            raw, self.buffer = self.buffer[: end + 1], self.buffer[end + 1 :]
            self.raw.append(raw)
            frames.append(parse_frame(raw))
        return frames


@dataclass(frozen=True)
class FileEntry:
    """One 11-byte memory configuration entry."""

    label: str
    file_type: str
    lock: str
    size: int
    times: str


def parse_memory(frame: Frame) -> list[FileEntry]:
    """The entries of a Set Memory Configuration (``E$``) frame."""
    assert frame.command == "E"
    assert frame.data[:1] == b"$"
    body = frame.data[1:].decode("ascii")
    assert len(body) % 11 == 0, body
    entries = []
    for start in range(0, len(body), 11):
        entry = body[start : start + 11]
        entries.append(FileEntry(entry[0], entry[1], entry[2], int(entry[3:7], 16), entry[7:]))
    return entries


@dataclass(frozen=True)
class TextFile:
    """A Write TEXT file frame whose message calls a STRING file."""

    label: str
    position: bytes
    mode: bytes
    calls: str


def parse_text_file(frame: Frame) -> TextFile:
    """Label, ESC, position, mode, then 10H and the STRING label (nothing else)."""
    assert frame.command == "A"
    data = frame.data
    assert len(data) == 6, data
    assert data[1:2] == b"\x1b", data
    assert data[4:5] == b"\x10", data
    return TextFile(chr(data[0]), data[2:3], data[3:4], chr(data[5]))


def parse_string_file(frame: Frame) -> tuple[str, str]:
    """A Write STRING file frame: (label, text)."""
    assert frame.command == "G"
    return chr(frame.data[0]), frame.data[1:].decode("ascii")


MEMORY = b"\x00\x00\x00\x00\x00\x01Z00\x02E$AAU0020FF001BL00400000\x030536\x04"
TEXT = b"\x00\x00\x00\x00\x00\x01Z00\x02AA\x1b0b\x101\x030175\x04"
STRING = b"\x00\x00\x00\x00\x00\x01Z00\x02G1$12,345.67\x030267\x04"
