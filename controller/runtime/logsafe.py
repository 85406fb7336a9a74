"""Log lines that input cannot forge: control characters escaped in everything the daemon logs.

Devices send topics, payloads and frames that end up in log messages (a rejection quotes what
it refused). A newline in them would start a line that reads as a record of its own
(``... CRITICAL journal tampered``); a carriage return, an escape sequence, a Unicode line
separator or a bidirectional override could rewrite what a terminal or a log viewer shows.
:func:`escape_control` makes such text inert, and :class:`OneLineFormatter` applies it to every
record, whatever the call site, so that a new log call quoting input cannot reopen the hole
(docs/faults.md, "Forged log lines").

Backslashes are left as they are: the aim is that a record is one line and shows what was
sent, not that the escaping can be reversed (the journal keeps the exact text).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from typing import TextIO

LOG_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""What the daemon's records look like: one line each, starting with the time and level."""

CONTINUATION: Final = "  "
"""Indents a traceback's lines, so that only a record's first line starts at column 0."""

_CONTROL: Final = re.compile(
    "["
    "\x00-\x1f\x7f"  # C0 controls (newline, carriage return, escape, NUL...) and DEL
    "\x80-\x9f"  # C1 controls (NEL, CSI...)
    "\u061c\u200e\u200f"  # bidirectional marks: Arabic letter mark, LRM, RLM
    "\u2028\u2029"  # line and paragraph separators
    "\u202a-\u202e"  # bidirectional embeddings and overrides
    "\u2066-\u2069"  # bidirectional isolates
    "]"
)
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_control(text: str) -> str:
    r"""``text`` with every control character escaped: ``"a\nb"`` becomes ``"a\\nb"``.

    Newline, carriage return and tab are written ``\n``, ``\r`` and ``\t``; other characters
    below U+0100 as ``\xNN``; line separators and bidirectional controls as ``\uNNNN``.
    """
    return _CONTROL.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    if named := _NAMED.get(char):
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class OneLineFormatter(logging.Formatter):
    """Each record's message on one line, control characters escaped.

    A traceback (or a stack) keeps its own lines, each indented by :data:`CONTINUATION` and
    escaped, so that an exception's message quoting input cannot start a line either.
    """

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        """The record's line, escaped."""
        return escape_control(super().formatMessage(record))

    def formatException(self, ei: logging._SysExcInfoType) -> str:  # noqa: N802 - logging's name
        """The traceback, on indented lines."""
        return _continuation(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's name
        """The stack, on indented lines."""
        return _continuation(super().formatStack(stack_info))


def _continuation(text: str) -> str:
    return "\n".join(CONTINUATION + escape_control(line) for line in text.split("\n"))


def log_handler(stream: TextIO) -> logging.Handler:
    """The daemon's log handler: one line per record on ``stream`` (the CLI's stderr)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter(LOG_FORMAT))
    return handler
