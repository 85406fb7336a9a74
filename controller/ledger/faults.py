"""Faults in the ledger: counted once acknowledged, and acknowledged by a supervisor's signature.

A fault (:class:`~controller.events.FaultRecorded`) moves nothing. What the ledger keeps of them
is the register of controller/ledger/fault_register.py, which a journal's first
acknowledgement opens:

* **Counting.** Once the register is open, each fault journaled counts one more and becomes
  the newest; before that a fault is a no-op, as it always was (old journals replay unchanged).
* **Acknowledging** (:class:`~controller.fault_events.FaultsAcknowledged`): any enrolled
  operator, supervisor or manager, signs it (the ``acknowledge-faults`` action, checked here
  through :func:`controller.ledger.authority.require`, whatever the entry path). On an open
  register it must name the newest fault and the count waiting: a fault acknowledged already
  is refused, and so is one that is not the newest (another was journaled since it was
  looked at). The signature is bound to the newest fault and the point acknowledged through
  (:func:`~controller.ledger.fault_register.fault_target`), so one signed before another
  fault came, or before another acknowledgement, is stale and refused.
* **The first acknowledgement** opens the register with the count and the fault it names:
  the ledger counted nothing before it, so the command and the console take both from the
  journal (the newest fault row) and the socket's state; its binding names no fault yet.

A refused acknowledgement is journaled as refused, like any refusal; nothing changes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import msgspec

from controller.ledger.authority import require
from controller.ledger.fault_register import FaultRegister
from controller.ledger.state import LedgerError

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import FaultRecorded
    from controller.fault_events import FaultsAcknowledged
    from controller.ledger.state import LedgerState

    Outcome = tuple[LedgerState, list[AnyEffect]]

ACTION = "acknowledge-faults"


def register_of(state: LedgerState) -> FaultRegister | None:
    """The fault register, None until the journal's first acknowledgement."""
    register = state.authority.faults
    return None if isinstance(register, msgspec.UnsetType) else register


def _with_register(state: LedgerState, register: FaultRegister) -> LedgerState:
    return replace(state, authority=replace(state.authority, faults=register))


def on_fault(state: LedgerState, event: FaultRecorded) -> Outcome:
    """A fault journaled: counted once the register is open, else a no-op as before."""
    register = register_of(state)
    if register is None:
        return state, []
    counted = msgspec.structs.replace(
        register, journaled=register.journaled + 1, newest=event.event_id
    )
    return _with_register(state, counted), []


def _check_terms(register: FaultRegister | None, event: FaultsAcknowledged) -> None:
    if not event.by:
        raise LedgerError(f"{ACTION}: it needs the name of who acknowledges")
    if not event.through.strip():
        raise LedgerError(f"{ACTION}: it names the newest fault acknowledged (through)")
    if not event.note.strip():
        raise LedgerError(f"{ACTION}: it needs a note saying what was found or done")
    if event.count < 1:
        raise LedgerError(f"{ACTION}: it acknowledges one fault or more, not {event.count}")
    if register is None:
        return
    if event.through == register.through:
        raise LedgerError(
            f"{ACTION}: fault {event.through} was acknowledged already (by {register.by}); "
            f"{register.waiting} fault(s) wait"
        )
    if event.through != register.newest:
        raise LedgerError(
            f"{ACTION}: {event.through} is not the newest fault waiting ({register.newest} is): "
            "a fault was journaled since, or it was acknowledged already; look again"
        )
    if event.count != register.waiting:
        raise LedgerError(
            f"{ACTION}: it says {event.count} fault(s), and {register.waiting} wait through "
            f"{register.newest}"
        )


def acknowledge_faults(state: LedgerState, event: FaultsAcknowledged) -> Outcome:
    """Every fault through ``event.through`` acknowledged (see the module docstring)."""
    register = register_of(state)
    _check_terms(register, event)
    state = require(state, event, ACTION)
    if register is None:
        opened = FaultRegister(event.count, event.through, event.count, event.through, event.by)
        return _with_register(state, opened), []
    done = msgspec.structs.replace(
        register, acknowledged=register.journaled, through=register.newest, by=event.by
    )
    return _with_register(state, done), []
