"""Alpha Sign Communications Protocol frames for LED meter signs (Adaptive Micro Systems).

The reference is *Alpha Sign Communications Protocol*, document 9708-8061 (revision F,
2006; "the document" below). A meter sign needs three of its commands, all sent in the
standard transmission packet (the "1-byte" or "^A" format, section 5.1) with a checksum::

      sync            header                  one command                    trailer
    +-----------+-----+------+---------+-----+---------+---------+-----+----------+-----+
    | NUL x 5   | SOH | type | address | STX | command | data    | ETX | checksum | EOT |
    | 00 ... 00 | 01  | 1 ch | 2 ch    | 02  | 1 ch    | n bytes | 03  | 4 ch     | 04  |
    +-----------+-----+------+---------+-----+---------+---------+-----+----------+-----+
                                         |<------------- summed ------------>|

* **NUL x 5**: lets the sign set its baud rate before the packet (section 5.1).
* **type**: which kind of sign must act on the packet; ``Z`` (5AH) is "all signs" (section
  5.1, the type-code table). ``!`` (21H) is *not* a broadcast: it selects signs with visual
  verification.
* **address**: two ASCII hex digits; ``00`` is broadcast to every sign of that type, ``?``
  stands for any digit (section 5.1).
* **checksum**: the 16-bit sum of every byte from STX through ETX inclusive, sent as four
  upper-case ASCII hex digits (section 5.1). ETX is sent only with a checksum; a sign that
  gets a wrong checksum drops the packet.

The commands (section 6):

``E`` ``$`` **Set memory configuration** (Write SPECIAL FUNCTION, section 6.2): clears the
    sign's memory and allocates files, each an 11-byte entry::

        label  type  lock  size     times
        1 ch   1 ch  1 ch  4 hex    4 ch
        A      A     U     0020     FF00     a TEXT file, unlocked, 32 bytes, runs always
        1      B     L     0040     0000     a STRING file, locked, 64 bytes

    Type ``A`` is a TEXT file and ``B`` a STRING file. The lock is whether the infrared
    keyboard may edit the file (``U``/``L``); STRING files are configured locked. For a TEXT
    file the last field is its start and stop time (Appendix B, "valid start and stop
    times": start ``FF`` means "always", and the stop time is then ignored); for a STRING
    file it is ``0000``.
``A`` **Write TEXT file** (section 6.1): file label, then ``ESC``, a display position
    (Appendix J) and a mode code (Appendix I), then the message. Our message is only the
    control code 10H, "call STRING", followed by the STRING file's label (section 6.1 and
    Appendix D, "STRING file notes"), so that the TEXT file shows whatever the STRING file
    holds.
``G`` **Write STRING file** (section 6.3): file label, then the text (at most 125 bytes,
    and no more than the size configured).

Memory is configured once per connection (:meth:`SignLayout.setup_frames`); after that each
meter update rewrites only the STRING file (:meth:`SignLayout.write_string`), so the sign
does not redraw or flash (Appendix D). Labels follow Appendix A: ``0`` is the priority TEXT
file and cannot be configured.

Nested packets (several commands between one header and EOT), the printable-ASCII packet
formats of section 5.2 and the sign's ACK/NAK answers are not used.

:func:`decode` reads packets back, pymodbus style: ``decode(bytes) -> (used, packet or None)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from controller.errors import InputError

NUL: Final = 0x00
SOH: Final = 0x01
STX: Final = 0x02
ETX: Final = 0x03
EOT: Final = 0x04
ESC: Final = 0x1B
CALL_STRING: Final = 0x10
"""In TEXT file data: show the STRING file whose label follows."""

SYNC: Final = bytes(5)
"""The NULs that open every packet (the sign sets its baud rate on them)."""

WRITE_TEXT: Final = "A"
WRITE_SPECIAL: Final = "E"
WRITE_STRING: Final = "G"
SET_MEMORY: Final = "$"
"""The special function (after ``E``) that sets the memory configuration."""

TEXT_FILE: Final = "A"
STRING_FILE: Final = "B"
UNLOCKED: Final = "U"
LOCKED: Final = "L"
RUN_ALWAYS: Final = "FF00"
"""A TEXT file's start time ``FF`` (always; the stop time ``00`` is then ignored)."""
NO_TIMES: Final = "0000"
"""The times field of a STRING file."""

MAX_STRING_SIZE: Final = 125
"""The largest STRING file the document allows, in bytes."""
TEXT_FILE_SIZE: Final = 0x20
"""Bytes allocated to the TEXT file; its data (ESC, position, mode, call STRING, label) is 5."""

BROADCAST: Final = "00"
ALL_SIGNS: Final = "Z"

Position = Literal["middle", "top", "bottom", "fill", "left", "right"]
"""A display position (Appendix J); ``left`` and ``right`` need an Alpha 3.0 sign."""

POSITIONS: Final[dict[str, str]] = {
    "middle": "\x20",
    "top": "\x22",
    "bottom": "\x26",
    "fill": "\x30",
    "left": "\x31",
    "right": "\x32",
}

Mode = Literal[
    "rotate",
    "hold",
    "flash",
    "roll-up",
    "roll-down",
    "roll-left",
    "roll-right",
    "wipe-up",
    "wipe-down",
    "wipe-left",
    "wipe-right",
    "scroll",
    "automode",
    "roll-in",
    "roll-out",
    "wipe-in",
    "wipe-out",
    "compressed-rotate",
]
"""A display mode (Appendix I); a meter sign uses ``hold`` (stationary)."""

MODES: Final[dict[str, str]] = {
    "rotate": "a",
    "hold": "b",
    "flash": "c",
    "roll-up": "e",
    "roll-down": "f",
    "roll-left": "g",
    "roll-right": "h",
    "wipe-up": "i",
    "wipe-down": "j",
    "wipe-left": "k",
    "wipe-right": "l",
    "scroll": "m",
    "automode": "o",
    "roll-in": "p",
    "roll-out": "q",
    "wipe-in": "r",
    "wipe-out": "s",
    "compressed-rotate": "t",
}

_ADDRESS: Final = re.compile(r"^[0-9A-F?]{2}$")
_HEX4: Final = re.compile(rb"^[0-9A-F]{4}$")


class AlphaProtocolError(InputError, ValueError):
    """A value the protocol cannot carry (a bad label, address, type code or size)."""


def checksum(block: bytes) -> bytes:
    """Four upper-case hex digits: the 16-bit sum of ``block`` (STX through ETX inclusive)."""
    return f"{sum(block) & 0xFFFF:04X}".encode("ascii")


def encode_packet(
    command: str, data: bytes, *, type_code: str = ALL_SIGNS, address: str = BROADCAST
) -> bytes:
    """One standard transmission packet with a checksum (the frame drawn above)."""
    check_type_code(type_code)
    check_address(address)
    if len(command) != 1 or not command.isascii():
        raise AlphaProtocolError(f"command code {command!r} is not one ASCII character")
    if any(byte in data for byte in (NUL, SOH, STX, ETX, EOT)):
        raise AlphaProtocolError(f"data {data!r} holds a framing byte (NUL, SOH, STX, ETX, EOT)")
    block = bytes([STX]) + command.encode("ascii") + data + bytes([ETX])
    header = bytes([SOH]) + (type_code + address).encode("ascii")
    return SYNC + header + block + checksum(block) + bytes([EOT])


def check_type_code(type_code: str) -> None:
    """A type code is one printable ASCII character (``Z``: all signs)."""
    if len(type_code) != 1 or not 0x20 < ord(type_code) < 0x7F:
        raise AlphaProtocolError(f"type code {type_code!r} is not one printable character")


def check_address(address: str) -> None:
    """An address is two upper-case hex digits or ``?`` (``00``: broadcast)."""
    if not _ADDRESS.match(address):
        raise AlphaProtocolError(f"address {address!r} is not two hex digits like 00 or 1F")


def check_label(label: str) -> None:
    """A file label is one character from 20H to 75H, not ``0`` (priority file) or ``?``."""
    if len(label) != 1 or not 0x20 <= ord(label) <= 0x75 or label in "0?":
        raise AlphaProtocolError(
            f"file label {label!r} must be one character from ' ' to 'u', not '0' or '?'"
        )


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One file in a memory configuration (11 bytes: label, type, lock, size, times)."""

    label: str
    file_type: Literal["text", "string"]
    size: int

    def encode(self) -> bytes:
        """The entry's bytes, as in the table in the module docstring."""
        check_label(self.label)
        if not 0 < self.size <= 0xFFFF:
            raise AlphaProtocolError(f"file size {self.size} does not fit four hex digits")
        if self.file_type == "text":
            kind, lock, times = TEXT_FILE, UNLOCKED, RUN_ALWAYS
        else:
            if self.size > MAX_STRING_SIZE:
                raise AlphaProtocolError(f"a STRING file holds at most {MAX_STRING_SIZE} bytes")
            kind, lock, times = STRING_FILE, LOCKED, NO_TIMES
        return f"{self.label}{kind}{lock}{self.size:04X}{times}".encode("ascii")


def sign_text(text: str, size: int) -> bytes:
    """Text as STRING file data: printable ASCII only (others become ``?``), at most ``size``."""
    printable = "".join(char if " " <= char <= "~" else "?" for char in text)
    return printable[:size].encode("ascii")


@dataclass(frozen=True, slots=True)
class SignLayout:
    """How one sign is addressed and what its memory holds: a TEXT file calling a STRING file."""

    type_code: str = ALL_SIGNS
    address: str = BROADCAST
    text_label: str = "A"
    string_label: str = "1"
    string_size: int = 64
    position: Position = "fill"
    mode: Mode = "hold"

    def __post_init__(self) -> None:
        check_type_code(self.type_code)
        check_address(self.address)
        check_label(self.text_label)
        check_label(self.string_label)
        if self.text_label == self.string_label:
            raise AlphaProtocolError("the TEXT and STRING files need different labels")
        if not 0 < self.string_size <= MAX_STRING_SIZE:
            raise AlphaProtocolError(f"string size must be 1 to {MAX_STRING_SIZE} bytes")
        if self.position not in POSITIONS:
            raise AlphaProtocolError(f"unknown display position {self.position!r}")
        if self.mode not in MODES:
            raise AlphaProtocolError(f"unknown display mode {self.mode!r}")

    def _packet(self, command: str, data: bytes) -> bytes:
        return encode_packet(command, data, type_code=self.type_code, address=self.address)

    def configure_memory(self) -> bytes:
        """``E$``: the TEXT file and the STRING file (this clears everything else)."""
        entries = (
            MemoryEntry(self.text_label, "text", TEXT_FILE_SIZE),
            MemoryEntry(self.string_label, "string", self.string_size),
        )
        data = SET_MEMORY.encode("ascii") + b"".join(entry.encode() for entry in entries)
        return self._packet(WRITE_SPECIAL, data)

    def text_data(self) -> bytes:
        """The TEXT file: position and mode, then "call STRING" and the STRING label."""
        control = POSITIONS[self.position] + MODES[self.mode]
        return bytes([ESC]) + control.encode("ascii") + bytes([CALL_STRING]) + self.label_bytes()

    def label_bytes(self) -> bytes:
        """The STRING file's label."""
        return self.string_label.encode("ascii")

    def write_text(self) -> bytes:
        """``A``: write the TEXT file that shows the STRING file."""
        return self._packet(WRITE_TEXT, self.text_label.encode("ascii") + self.text_data())

    def setup_frames(self) -> tuple[bytes, bytes]:
        """What to send after each (re)connection, in order: memory, then the TEXT file."""
        return self.configure_memory(), self.write_text()

    def write_string(self, text: str) -> bytes:
        """``G``: write the STRING file (the only frame a meter update needs)."""
        return self._packet(WRITE_STRING, self.label_bytes() + sign_text(text, self.string_size))


@dataclass(frozen=True, slots=True)
class Packet:
    """A standard transmission packet read back by :func:`decode`."""

    type_code: str
    address: str
    command: str
    data: bytes
    checksum: str | None
    """The four hex digits sent, or None for a packet sent without ETX and checksum."""
    checksum_ok: bool | None
    """Whether the checksum matches the bytes (None without a checksum)."""


def decode(buffer: bytes | bytearray) -> tuple[int, Packet | None]:
    """Read one packet from the front of ``buffer``: (bytes used, the packet or None).

    Sync NULs and bytes before SOH are skipped (used, None). An incomplete packet uses
    nothing before its SOH, so call again with more bytes. A packet whose checksum does not
    match is returned with ``checksum_ok=False``: the caller decides.
    """
    start = buffer.find(SOH)
    if start < 0:
        return len(buffer), None
    stx = start + 4  # SOH, type code, two address characters
    if len(buffer) <= stx:
        return start, None
    if buffer[stx] != STX:
        return start + 1, None  # not a header: resync after this SOH
    end = buffer.find(EOT, stx)
    if end < 0:
        return start, None
    if end == stx + 1:
        return end + 1, None  # STX EOT: no command
    header = bytes(buffer[start + 1 : stx]).decode("ascii", errors="replace")
    etx = buffer.find(ETX, stx, end)
    sent: str | None = None
    valid: bool | None = None
    body_end = end
    if etx >= 0:
        body_end = etx
        digits = bytes(buffer[etx + 1 : end])
        sent = digits.decode("ascii", errors="replace")
        valid = bool(_HEX4.match(digits)) and digits == checksum(bytes(buffer[stx : etx + 1]))
    command = chr(buffer[stx + 1])
    packet = Packet(
        type_code=header[0],
        address=header[1:],
        command=command,
        data=bytes(buffer[stx + 2 : body_end]),
        checksum=sent,
        checksum_ok=valid,
    )
    return end + 1, packet
