"""Text that names something must be one line that shows what it is: no control characters.

An identifier (an operator, a table, a pool, a table agent's key, a pay) or a reason is shown on
terminals, in reports and in logs, and copied from them into the next command. A newline in it
starts a line that reads as a record of its own; a carriage return, an escape sequence or a
bidirectional override rewrites what a terminal shows; a NUL or a zero-width character makes two
names that look alike differ. So the wires refuse such text (drivers/mqtt/payloads.py) and so
does the ledger, at every live append (controller/ledger/identifiers.py; docs/security.md,
"Identifiers are one line of text").

The characters refused are those of the Unicode general categories Cc (controls: NUL, newline,
tab, ESC, DEL, the C1 controls), Cf (format: bidirectional marks, embeddings, overrides and
isolates, zero-width joiners, the byte-order mark, the soft hyphen), Zl and Zp (the line and
paragraph separators). Spaces (Zs) are text.
"""

from __future__ import annotations

import unicodedata
from typing import Final

CONTROL_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp"})
"""The Unicode general categories no identifier or reason may carry."""


def control_character(text: str) -> str | None:
    """The first character of ``text`` in :data:`CONTROL_CATEGORIES`; None: there is none.

    ``str.isprintable`` is false for every such character (and for a few more, such as an
    unassigned code point or a no-break space), so printable text, nearly all of it, is passed
    at C speed and only the rest is looked at one character at a time.
    """
    if text.isprintable():
        return None
    for char in text:
        if unicodedata.category(char) in CONTROL_CATEGORIES:
            return char
    return None


def named(char: str) -> str:
    """A character as a message names it: ``U+001B`` with its Unicode name where it has one."""
    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    return f"{code} ({name})" if name else code


def control_refusal(what: str, text: str) -> str | None:
    """Why ``text``, the ``what`` of something, is refused; None: it carries no control character.

    The text is quoted escaped (``repr``), so the message itself is one inert line.
    """
    char = control_character(text)
    if char is None:
        return None
    return (
        f"{what} {text!r} carries the control character {named(char)}: an identifier or a "
        "reason is one line of text, shown as it is on terminals and in reports"
    )
