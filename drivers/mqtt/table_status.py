"""Tables' ``status`` topics as the MQTT source turns them into events: changes only, in order.

``table/<tid>/status`` is ``online`` (retained) while a table is connected and its last will
``offline`` when it is not. A *change* becomes a ``TableStatusChanged`` event; the same status
again (the retained copy sent at each subscription, a redelivery) is skipped. A change's id
``<table>/status/<source>/<start>/<n>`` is unique (the source's start time and a count) and
stays the same when the same change is submitted again after a failure. Changes are told
apart as they arrive (messages are pipelined) and counted as done once journaled; each new
connection starts again from what was journaled.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from drivers.mqtt.payloads import table_status_event

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.events import TableStatusChanged
    from controller.ports import Receipt


class StatusChanges:
    """What each table's status is, as journaled and as seen on this connection."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._start = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        # As journaled (kept across connections), and as seen on this connection so far
        # (ahead of the journal while messages are in flight).
        self._changes = 0
        self._online: dict[str, bool] = {}
        self._seen_count = 0
        self._seen: dict[str, bool] = {}

    def restart(self) -> None:
        """A new connection: what was not journaled is delivered again, told apart again."""
        self._seen = dict(self._online)
        self._seen_count = self._changes

    def change(
        self, table_id: str, *, online: bool, at: str
    ) -> tuple[TableStatusChanged, Callable[[Receipt], None]] | None:
        """The event of a change and what to note once journaled; None if nothing changed."""
        if self._seen.get(table_id) == online:
            return None
        number = self._seen_count
        self._seen[table_id] = online
        self._seen_count += 1
        event_id = f"{table_id}/status/{self._source}/{self._start}/{number}"
        event = table_status_event(table_id, online=online, event_id=event_id, at=at)

        def journaled(_receipt: Receipt) -> None:
            # Only now: if it is refused, the same change is submitted again under the same
            # id on the next connection (unless a later one was journaled: then a new one).
            self._online[table_id] = online
            self._changes = max(self._changes, number + 1)

        return event, journaled
