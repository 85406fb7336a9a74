"""What the sinks hear when the controller's availability changes (docs/architecture.md).

Pure: the updates the sequencer publishes when it starts, fails closed, recovers and stops.
A controller that cannot journal shows every table CLOSED, so that no sign or table takes a
wager it could not record; once the journal takes writes again each table shows the state its
journal holds. Updates that follow from no journal row carry ``seq`` 0 and are ordered by
their epoch alone (:class:`controller.outputs.FollowerOrder`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.outputs import ControllerUpdate, TableUpdate
from controller.runtime.updates import standing_updates

if TYPE_CHECKING:
    from controller.ledger.state import LedgerState
    from controller.outputs import AnyUpdate


def started(state: LedgerState, at: str, head_seq: int, epoch: int) -> list[AnyUpdate]:
    """Online, then where the journal stands (every meter, each wide-area pool's status)."""
    online = ControllerUpdate(at, 0, online=True, reason="started", epoch=epoch)
    return [online, *standing_updates(state, at, head_seq, epoch)]


def failing_closed(state: LedgerState, reason: str, at: str, epoch: int) -> list[AnyUpdate]:
    """Offline, and every table closed: nothing is taken that cannot be journaled."""
    updates: list[AnyUpdate] = [ControllerUpdate(at, 0, online=False, reason=reason, epoch=epoch)]
    updates += [
        TableUpdate(at, 0, table_id, online=False, reason="controller failing closed", epoch=epoch)
        for table_id in sorted(state.tables)
    ]
    return updates


def recovered(state: LedgerState, at: str, epoch: int) -> list[AnyUpdate]:
    """Online again, and each table as its journal holds it (one closed for silence stays so)."""
    updates: list[AnyUpdate] = [
        ControllerUpdate(at, 0, online=True, reason="journal recovered", epoch=epoch)
    ]
    for table_id in sorted(state.tables):
        live = state.table_states.get(table_id)
        online = live.online if live is not None else True
        updates.append(
            TableUpdate(at, 0, table_id, online=online, reason="controller recovered", epoch=epoch)
        )
    return updates


def stopping(at: str, epoch: int) -> list[AnyUpdate]:
    """Offline: the controller stops (its sinks say so before they go)."""
    return [ControllerUpdate(at, 0, online=False, reason="stopping", epoch=epoch)]
