r"""Identifiers and reasons in the ledger are one line of text: no control or format characters.

The wires refuse a control character in what a device names (drivers/mqtt/payloads.py, the
serial framing), but whoever can run ``jackpotd apply`` or a command puts any text before the
ledger: an operator named ``"sup1\x1b]0;pwned\x07"``, a table id with a right-to-left
override, a meter adjustment whose reason carries a newline and a forged second line. They are
shown on terminals, in reports and logs, and pasted into the next command. So the ledger refuses
an event any of whose identifiers or reasons carries a character of the categories
:data:`controller.text.CONTROL_CATEGORIES` (docs/security.md, "Identifiers are one line of
text"): the ids of operators (a name, ``by``, a signer), tables, pools, rounds and events (a
pay's id is made of them), devices, table agents' keys, wide-area sites, and every reason.

Old journals may hold such text (a command's ``--reason`` was never checked; a lab's journal
took any ``apply``), and replaying them must give what they gave when written. So this is not
checked by :func:`controller.ledger.apply.apply` on a replay: it is checked at a live append
(the command line, the daemon), as a signature's window is held to the controller's clock
there (controller/journal/provenance.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from controller.events import FaultRecorded
from controller.ledger.state import LedgerError
from controller.text import control_refusal

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.events import AnyEvent

NAMED: Final = {
    "event_id": "event id",
    "table_id": "table id",
    "pool_id": "pool id",
    "payout_id": "payout id",
    "round_id": "round id",
    "device": "device id",
    "name": "operator id",
    "by": "operator id",
    "operator": "operator id",
    "key_id": "table agent id",
    "site": "site id",
    "reason": "reason",
}
"""Each field that holds an identifier or a reason, and what a refusal calls it."""

_LISTS: Final = {"pools": "pool id"}
"""Fields that hold identifiers in a list or as a mapping's keys (a site's pools)."""


def _texts(struct: msgspec.Struct) -> Iterator[tuple[str, str]]:
    """Every (what, text) of ``struct`` that must be one line, nested structs included."""
    for field in struct.__struct_fields__:
        value = getattr(struct, field)
        what = NAMED.get(field)
        if what is not None and isinstance(value, str):
            yield what, value
        elif field in _LISTS and isinstance(value, list | dict):
            yield from ((_LISTS[field], str(item)) for item in value)
        elif isinstance(value, msgspec.Struct):
            yield from _texts(value)
        elif isinstance(value, list | tuple):
            for item in value:
                if isinstance(item, msgspec.Struct):
                    yield from _texts(item)


def identifier_refusal(event: AnyEvent) -> str | None:
    """Why ``event`` is refused for a control character in an identifier or a reason; None: not.

    Nested parts are read too: every signer's name, a table agent's signature, and each change
    of a configuration approval.
    """
    if isinstance(event, FaultRecorded):
        return None  # the journal's record of what it refused quotes what was sent, escaped
    for what, text in _texts(event):
        why = control_refusal(what, text)
        if why is not None:
            return why
    return None


def check_identifiers(event: AnyEvent) -> None:
    """Refuse ``event`` (:class:`LedgerError`) if :func:`identifier_refusal` gives a reason."""
    why = identifier_refusal(event)
    if why is not None:
        raise LedgerError(why)
