"""The controller's signed head: its high-water mark, in the shared vocabulary.

Its own module, importing nothing of the controller, so that what the sinks publish
(:mod:`controller.outputs`) and what a property sends central over the wide-area link
(:mod:`controller.widearea.messages`) carry one type (controller/journal/high_water.py says what
is signed and how it is checked; docs/security.md, "History never goes back").
"""

from __future__ import annotations

import msgspec


class SignedHead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The controller's signed statement that row ``seq`` of its journal has hash ``hash``.

    Its high-water mark, kept outside the journal and published off the box
    (controller/journal/high_water.py says what is signed and how it is checked).
    """

    controller: str
    journal: str
    """The journal's identity (controller/ledger/binding.py); empty on a journal without one."""
    seq: int
    hash: str
    at: str
    key_id: str
    signature: str = ""
