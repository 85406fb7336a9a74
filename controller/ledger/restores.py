"""Managers accept a restore of the journal from a back-up, and the rows it loses.

The controller never starts on a journal behind the head it signed last (its high-water mark,
docs/security.md "History never goes back"): rows acknowledged to devices, wins paid, would be
gone without a trace. A restore from a back-up after the live file was lost is exactly that, on
purpose. So two managers sign a :class:`~controller.events.HistoryRestored` that names the mark
they accept to lose and why (the incident, for the record); the ledger keeps the accepted mark
with the journal's identity (:class:`~controller.ledger.binding.JournalBinding`), and start-up
accepts that mark, and no other, behind the journal's head. A shell as the service user, who
holds no manager's key, cannot make one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from controller.ledger.authority import DUAL, require
from controller.ledger.state import LedgerError

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import HistoryRestored
    from controller.ledger.state import LedgerState


def on_history_restored(
    state: LedgerState, event: HistoryRestored
) -> tuple[LedgerState, list[AnyEffect]]:
    """Two managers accept losing what the mark covered: the mark is accepted for good."""
    if not event.reason.strip():
        raise LedgerError("accepting a restore says why (the incident)")
    if state.binding is None:
        raise LedgerError("a journal without an identity keeps no high-water mark to accept")
    if event.lost_seq < 1 or len(event.lost_hash) != 64:
        raise LedgerError("the mark accepted is a row and its SHA-256 hash (64 hex digits)")
    state = require(state, event, "accept-restore", signers=DUAL)
    binding = state.binding
    if binding is None:  # pragma: no cover - require keeps the identity
        raise LedgerError("a journal without an identity keeps no high-water mark to accept")
    accepted = binding.accepted | {(event.lost_seq, event.lost_hash)}
    return replace(state, binding=replace(binding, accepted=accepted)), []
