"""A manager names a journal written before identities existed, once (docs/security.md).

A journal's identity is made by the founding manager's self-signed enrollment
(controller/ledger/binding.py). A journal founded before identities existed has none: its
unbound signatures replay as they were written, and the rules that hold only on journals with
an identity (bound signatures, lockout windows, one key per operator) do not reach it. A
manager's signed :class:`~controller.events.JournalIdentified` gives it one: the signature is
bound to the new identity and to the journal's state (:func:`~controller.ledger.binding.
fingerprint`), so the same event copied into another journal where the same manager is
enrolled is refused there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from controller.ledger.authority import require
from controller.ledger.journal_binding import JournalBinding
from controller.ledger.state import LedgerError

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import JournalIdentified
    from controller.ledger.state import LedgerState


def on_journal_identified(
    state: LedgerState, event: JournalIdentified
) -> tuple[LedgerState, list[AnyEffect]]:
    """The journal takes the identity its manager signed for; once, and only once signed."""
    if state.binding is not None:
        raise LedgerError(f"the journal has an identity already ({state.binding.journal})")
    if not state.authority.signed:
        raise LedgerError(
            "a journal whose authority is not signed is named by its first enrollment with a key"
        )
    if not event.journal.strip() or not event.reason.strip():
        raise LedgerError("identifying a journal names the identity and says why")
    return require(replace(state, binding=JournalBinding(event.journal)), event, "identify"), []
