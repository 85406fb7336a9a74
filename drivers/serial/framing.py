r"""Framing of the reference serial protocol ("table peripheral serial v1", docs/architecture.md).

A frame is one ASCII line: a payload between ``$`` and ``*``, the CRC of the payload, CR LF::

    +-----+--------------------------+-----+-------------------+------+------+
    |  $  |  payload                 |  *  |  CRC-16 (4 hex)   |  CR  |  LF  |
    +-----+--------------------------+-----+-------------------+------+------+
    | 24h |  0..256 bytes, printable |  2Ah| e.g. "29B1"       |  0Dh |  0Ah |
    |     |  ASCII except "$" / "*"  |     | upper case sent,  |      |      |
    |     |                          |     | either accepted   |      |      |
    +-----+--------------------------+-----+-------------------+------+------+

    $BET,shoe-1,42,3,progressive,1,100*4FE6\r\n

The CRC is CRC-16/CCITT-FALSE of the payload bytes only: polynomial 0x1021, initial value
0xFFFF, no reflection, no final XOR (its check value over ``123456789`` is 0x29B1).

Anything that is not a well-formed frame is skipped, and decoding resynchronises at the next
``$``: bytes before a ``$``, a frame cut short by a new ``$``, a payload with a control byte, a
payload longer than 256 bytes (``oversize``), a checksum that is not four hex digits or is not
followed by CR LF. A well-formed frame whose checksum does not match is consumed whole and
reported as ``bad-crc``. The device resends whatever it does not see acknowledged, so the
framer never guesses at damaged bytes.

Two layers, as in pymodbus: :func:`decode` has the framer contract
``decode(buffer) -> (bytes used, frame or None)`` (``(0, None)`` means "need more bytes",
``(n, None)`` means "skip n bytes"); :class:`FrameReader` keeps the buffer of a stream, feeds
it chunks and hands back frames and :class:`FrameError` notices, one notice per skipped run.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Final

MAX_PAYLOAD: Final = 256
"""Longest payload in bytes (docs/architecture.md)."""

START: Final = b"$"
END: Final = b"*"
EOL: Final = b"\r\n"
_CRC_DIGITS: Final = 4
_PREVIEW: Final = 64
"""How many skipped bytes a notice keeps, for the log and the journaled fault."""

_PRINTABLE: Final = re.compile(rb"[\x20-\x7e]*")
_HEX_PREFIX: Final = re.compile(rb"[0-9A-Fa-f]{0,4}")

BAD_CRC: Final = "bad-crc"
GARBAGE: Final = "garbage"
OVERSIZE: Final = "oversize"


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``binascii.crc_hqx`` is this CRC given init 0xFFFF)."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(payload: str) -> bytes:
    """The frame carrying ``payload``; raises ValueError if the payload cannot be framed."""
    try:
        data = payload.encode("ascii")
    except UnicodeEncodeError as error:
        raise ValueError(f"payload {payload!r} is not ASCII") from error
    if len(data) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(data)} bytes exceeds {MAX_PAYLOAD}")
    if not _PRINTABLE.fullmatch(data) or START in data or END in data:
        raise ValueError(f"payload {payload!r} must be printable ASCII without '$' or '*'")
    return b"%s%s%s%04X%s" % (START, data, END, crc16(data), EOL)


@dataclass(frozen=True, slots=True)
class Frame:
    """A frame whose checksum matched: its payload, still undecoded text."""

    payload: str


@dataclass(frozen=True, slots=True)
class FrameError:
    """Bytes that were skipped: why, how many, and the first few of them."""

    reason: str
    """``bad-crc``, ``garbage`` or ``oversize``."""
    length: int
    preview: bytes

    def describe(self) -> str:
        """A one-line account for logs and journaled faults."""
        shown = self.preview.decode("ascii", "backslashreplace")
        more = "..." if self.length > len(self.preview) else ""
        return f"{self.length} bytes: {shown}{more}"


def _skip(reason: str, buffer: bytes | bytearray, start: int, end: int) -> tuple[int, FrameError]:
    preview = bytes(buffer[start : min(end, start + _PREVIEW)])
    return end - start, FrameError(reason, end - start, preview)


def _resync(reason: str, buffer: bytes | bytearray, start: int) -> tuple[int, FrameError]:
    """Skip from ``start`` (a ``$`` that began no frame) up to the next ``$``, or everything."""
    following = buffer.find(START, start + 1)
    return _skip(reason, buffer, start, len(buffer) if following < 0 else following)


def scan(buffer: bytes | bytearray, start: int = 0) -> tuple[int, Frame | FrameError | None]:
    """Look at ``buffer[start:]``: bytes used and a frame, a skip notice, or nothing yet."""
    if start >= len(buffer):
        return 0, None
    if buffer[start] != START[0]:
        dollar = buffer.find(START, start)
        return _skip(GARBAGE, buffer, start, len(buffer) if dollar < 0 else dollar)
    body = start + len(START)
    # Only the first MAX_PAYLOAD + 1 bytes can hold the "*": look no further, so that a
    # stream without one is declared oversize instead of growing the buffer.
    star = buffer.find(END, body, body + MAX_PAYLOAD + 1)
    window = buffer[body : body + MAX_PAYLOAD + 1 if star < 0 else star]
    if START in window or not _PRINTABLE.fullmatch(window):
        return _resync(GARBAGE, buffer, start)  # cut short by a new frame, or line noise
    if star < 0:
        if len(window) > MAX_PAYLOAD:
            return _resync(OVERSIZE, buffer, start)
        return 0, None
    crc_at = star + len(END)
    tail = bytes(buffer[crc_at : crc_at + _CRC_DIGITS + len(EOL)])
    # Check the part of the tail that has arrived, so that a broken one is skipped at once.
    if not _HEX_PREFIX.fullmatch(tail[:_CRC_DIGITS]) or not EOL.startswith(tail[_CRC_DIGITS:]):
        return _resync(GARBAGE, buffer, start)
    if len(tail) < _CRC_DIGITS + len(EOL):
        return 0, None
    end = crc_at + len(tail)
    payload = bytes(window)
    if int(tail[:_CRC_DIGITS], 16) != crc16(payload):
        return _skip(BAD_CRC, buffer, start, end)
    return end - start, Frame(payload.decode("ascii"))


def decode(buffer: bytes) -> tuple[int, Frame | None]:
    """The pymodbus framer contract: ``(0, None)`` need more, ``(n, None)`` skip n bytes."""
    used, item = scan(buffer)
    return used, item if isinstance(item, Frame) else None


class FrameReader:
    """Frames of a byte stream: feed chunks as they arrive, get frames and skip notices.

    Consecutive skips (line noise, a broken frame, more noise) form one run and give one
    notice, when the run ends, so that one burst of interference counts once. A bad CRC
    ends any run and is reported on its own: it is a whole frame that the device will resend.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._run: FrameError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held while waiting for the rest of a frame (never more than one frame)."""
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[Frame | FrameError]:
        """Add received bytes; return the frames and notices they complete, in order."""
        self._buffer += chunk
        out: list[Frame | FrameError] = []
        position = 0
        while True:
            used, item = scan(self._buffer, position)
            if used == 0:
                break
            position += used
            if isinstance(item, FrameError) and item.reason != BAD_CRC:
                self._extend_run(item)
                continue
            out.extend(self._end_run())
            if item is not None:
                out.append(item)
        # Compact once per chunk rather than per frame: deleting from the front is O(n).
        del self._buffer[:position]
        return out

    def flush(self) -> list[FrameError]:
        """The stream ended (port closed): whatever was held is a skipped run."""
        if self._buffer:
            _, partial = _skip(GARBAGE, self._buffer, 0, len(self._buffer))
            self._extend_run(partial)
            self._buffer.clear()
        return self._end_run()

    def _extend_run(self, skipped: FrameError) -> None:
        run = self._run
        if run is None:
            self._run = skipped
            return
        room = _PREVIEW - len(run.preview)
        preview = run.preview + skipped.preview[:room] if room > 0 else run.preview
        self._run = FrameError(run.reason, run.length + skipped.length, preview)

    def _end_run(self) -> list[FrameError]:
        run, self._run = self._run, None
        return [] if run is None else [run]
