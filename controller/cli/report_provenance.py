"""``jackpotd report``'s provenance: who wrote the period's rows, and what table agents signed.

Every append names its writer (docs/journal.md, "Provenance"): the daemon's intakes (``mqtt``,
``serial``, ``agent``, ``simulator``, ``daemon``), an operator's command (``cli <command>``),
``apply``, ``copy``; a row journaled before provenance was reads ``unrecorded``. ``jackpotd
verify`` counts them over the whole journal; the report counts them over its period, as
``verify`` names them (controller/journal/provenance.py ``writer_of``), so an auditor reading a
gaming day's reconciliation sees beside it who journaled that day's rows.

And per table, the period's device events (a bet sensor's, the dealer's button's, the shoe's
input and a device's void: the table's word that moves money), how many carried their table
agent's signature (docs/ha.md, "Signed forwarding"), and how many forwarded events were refused
for it (journaled as ``agent-signature`` faults). A table whose agent is enrolled shows every
device event signed; a table without one shows none, and that is for the floor to see. A table's
status (online, offline) is not signed yet (docs/security.md) and is not counted here.

The provenance column is outside the hash chain (a writer of the file can edit it): this is
what the file says, as ``verify`` says it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from controller.agent_signature import AGENT_SIGNATURE
from controller.cli.tables import Column, print_table
from controller.events import FaultRecorded, TableStatusChanged, decode_event
from controller.journal.provenance import writer_of
from controller.ledger.screen import table_word

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from controller.events import AnyEvent

WRITER_COLUMNS = (Column("writer", whole=True), Column("rows", figures=True))
TABLE_COLUMNS = (
    Column("table", whole=True),
    Column("device events", figures=True),
    Column("agent-signed", figures=True),
    Column("share", figures=True),
    Column("refused", figures=True),
)


@dataclass(slots=True)
class TableWord:
    """One table's device events over the period, and what its agent signed of them."""

    events: int = 0
    signed: int = 0
    refused: int = 0

    def share(self) -> str:
        """The agent-signed share of the device events, in tenths of a percent (exact below)."""
        if not self.events:
            return ""
        tenths = self.signed * 1000 // self.events
        return f"{tenths // 10}.{tenths % 10}%"


@dataclass(slots=True)
class Provenance:
    """The period's writers (rows per writer) and its tables' signed share."""

    writers: dict[str, int] = field(default_factory=dict)
    tables: dict[str, TableWord] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        """The provenance as the JSON report gives it (exact counts)."""
        return {
            "writers": dict(self.counted()),
            "tables": {
                table_id: {
                    "device_events": word.events,
                    "agent_signed": word.signed,
                    "refused_for_the_signature": word.refused,
                }
                for table_id, word in sorted(self.tables.items())
            },
        }

    def counted(self) -> list[tuple[str, int]]:
        """The writers, the busiest first (as ``verify`` lists them)."""
        return sorted(self.writers.items(), key=lambda item: (-item[1], item[0]))


_KINDS = frozenset(
    {"bet-sensed", "bets-locked", "card-dealt", "deal-complete", "round-voided", "fault"}
)
"""The row kinds that may be a device event or a refusal for an agent's signature (the rest are
not decoded)."""


def _device_event(event: AnyEvent) -> bool:
    return table_word(event) and not isinstance(event, TableStatusChanged)


def provenance(rows: Iterable[Mapping[str, Any]], origins: Mapping[int, str | None]) -> Provenance:
    """The provenance of the period's ``rows``; ``origins``: each row's provenance by ``seq``."""
    found = Provenance()
    for row in rows:
        seq = int(row["seq"])
        writer = writer_of(origins.get(seq))
        found.writers[writer] = found.writers.get(writer, 0) + 1
        kind = row["kind"]
        if kind not in _KINDS:
            continue
        event = decode_event(row["event"])
        if isinstance(event, FaultRecorded):
            if event.reason == AGENT_SIGNATURE and event.source.startswith("table "):
                word = found.tables.setdefault(event.source.removeprefix("table "), TableWord())
                word.refused += 1
            continue
        if _device_event(event):
            word = found.tables.setdefault(str(getattr(event, "table_id", "")), TableWord())
            word.events += 1
            word.signed += getattr(event, "agent_signature", msgspec.UNSET) is not msgspec.UNSET
    return found


def print_provenance(found: Provenance) -> None:
    """The period's writers, then its tables' signed share, as tables whole at 80 columns."""
    print('Who wrote the rows (docs/journal.md, "Provenance"):')
    print_table(WRITER_COLUMNS, found.counted())
    if not found.tables:
        print("device events: none in this period")
        return
    # Each heading fits 80 columns: a terminal that wrapped it would hide nothing, but an
    # auditor's printout of the report reads better whole.
    print("Device events per table, signed by the table's agent or refused (docs/ha.md):")
    print_table(
        TABLE_COLUMNS,
        [
            (table_id, word.events, word.signed, word.share(), word.refused)
            for table_id, word in sorted(found.tables.items())
        ],
    )
