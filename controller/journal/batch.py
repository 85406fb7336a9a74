"""One group commit's events, and the rows of the materialized state they changed.

The journal applies a batch's events one after the other and writes, once the last is
applied, each changed row of the materialized state once, as the batch left it, stamped with
the journal row of the last event that changed it (:mod:`controller.journal.sqlite.store`). This
finds those rows and stamps. ``tests/journal/test_journal_batches.py`` proves the file is then what
appending the events one at a time would have written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic

from controller.effects import PayoutMade, Verified
from controller.journal.domain import State
from controller.wide_effects import SiteMessageQueued

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterator, Mapping

    from controller.events import AnyEvent
    from controller.ports import Receipt


class Batch(Generic[State]):
    """What one transaction's events did: the states they left, for writing the changes once.

    ``changed(name, mapping)`` gives each entry of the state mapping ``name`` (``pools``,
    ``table_states``...) that differs from the batch's start, with the journal row of the last
    event that changed it: the event's own table is checked first (the usual case: a device
    event changes its table's live state), otherwise the states are searched back from the end.
    Changed means another object: the ledger never changes a state in place.
    """

    def __init__(self, start: State) -> None:
        self.start = start
        self.states: list[tuple[int, State]] = []
        """The state after each event written, with its journal row, in order."""
        self.table_changed: dict[str, int] = {}
        """The row of the last event that changed its own table's live state, by table."""
        self.paying: list[tuple[Receipt, AnyEvent]] = []
        """The events whose effects make or verify payouts, in order."""
        self.queued: list[tuple[int, SiteMessageQueued]] = []
        """The site messages the events queued, each with its journal row, in order."""

    def add(self, receipt: Receipt, event: AnyEvent, state: State) -> None:
        """An event written at ``receipt.seq``, leaving ``state``."""
        before = self.states[-1][1] if self.states else self.start
        table_id = getattr(event, "table_id", None)
        if (
            isinstance(table_id, str)
            and state.table_states is not before.table_states
            and state.table_states.get(table_id) is not before.table_states.get(table_id)
        ):
            self.table_changed[table_id] = receipt.seq
        self.states.append((receipt.seq, state))
        if any(isinstance(effect, (PayoutMade, Verified)) for effect in receipt.effects):
            self.paying.append((receipt, event))
        self.queued += [
            (receipt.seq, effect)
            for effect in receipt.effects
            if isinstance(effect, SiteMessageQueued)
        ]

    def changed(self, name: str, new: Mapping[Any, Any]) -> Iterator[tuple[Any, Any, int]]:
        """The entries of mapping ``name`` the batch changed: (key, value, row)."""
        old: Mapping[Any, Any] = getattr(self.start, name)
        if new is old:
            return
        for key, value in new.items():
            if old.get(key) is not value:
                yield key, value, self._row_of(name, key, value)

    def _row_of(self, name: str, key: Hashable, value: object) -> int:
        if name == "table_states" and isinstance(key, str):
            seq = self.table_changed.get(key)
            if seq is not None and self._value_at(seq, name, key) is value:
                return seq
        row = self.states[-1][0]
        for seq, state in reversed(self.states):
            if getattr(state, name).get(key) is not value:
                break
            row = seq
        return row

    def _value_at(self, seq: int, name: str, key: Hashable) -> object:
        first = self.states[0][0]
        state = self.states[seq - first][1]
        return getattr(state, name).get(key)
