"""Where each journaled event came from, and the writers a signed journal takes a table's word from.

Every append says where its events came from (docs/journal.md, "Provenance"): one of the
daemon's intakes (``mqtt client=... topic=...``, ``serial port=...``, ``agent table=...
boot=...``, ``simulator``, ``daemon ...``), an operator's command (``cli <command>``), ``jackpotd
apply`` (``apply``) or ``journal copy`` (the source's, or ``copy``). An append that names none
takes its journal's ``writer`` (the command or the service that opened it); one still unnamed
(an in-process caller that does not say) is never taken for the intake. The provenance is
written beside the row and is not part of what the hash chain covers, so old rows and chains
are as they were; archive segments carry it on each row's line (controller/journal/segments.py).

A device's input and a table's status are the table's word: on a journal whose authority is
signed (as the append finds it), only the daemon's intake may journal them. The append refuses
one from any other writer through the domain's screen (:mod:`controller.ledger.screen`);
``verify`` counts each row's writer here (:func:`writers`) and names a table's word a signed
journal holds from another writer (its provenance was edited, or the row written into the file).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from controller.provenances import copied, from_intake

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from controller.events import AnyEvent
    from controller.journal.domain import Domain, State
    from controller.journal.row_checks import VerifyReport
    from controller.journal.rows import Row
    from controller.provenances import Provenances

PROVENANCE: Final = "provenance"
"""A row's provenance among its values where it is carried on (archive segments, copies)."""


def with_provenance(
    rows: Iterable[Row], provenances: Iterable[tuple[int, str | None]]
) -> Iterator[Row]:
    """Each row with its provenance among its values (``provenances``: by ``seq``, in order).

    Both are read in order in one snapshot of the journal; a row the provenances do not reach
    (none recorded) carries None.
    """
    known = iter(provenances)
    found: tuple[int, str | None] | None = next(known, None)
    for row in rows:
        seq = int(row.values["seq"])
        while found is not None and found[0] < seq:
            found = next(known, None)
        provenance = found[1] if found is not None and found[0] == seq else None
        yield replace(row, values={**row.values, PROVENANCE: provenance})


UNRECORDED: Final = "unrecorded"
"""Who wrote a row that records no provenance (journaled before it was, schema 14)."""


def writer_of(provenance: str | None) -> str:
    """Who a provenance says journaled a row, as verify counts them.

    The intake's kind (``mqtt``, ``serial``, ``agent``, ``daemon``...), ``cli <command>``,
    ``apply``, ``copy``; :data:`UNRECORDED` for a row that records none.
    """
    if provenance is None:
        return UNRECORDED
    if provenance.startswith("cli "):
        return provenance
    return provenance.partition(" ")[0]


def writers(domain: Domain[State], state: State, row: Row, report: VerifyReport) -> None:
    """Count the row's writer; a table's word on a signed journal from another is a problem.

    ``state``: the state the append found (before the row); ``domain`` says whether its
    authority is signed and what is a table's word
    (:func:`controller.ledger.screen.table_word`).

    The append never journals one (:func:`refusal`): its provenance was edited in the file, or
    the row was written into it. The provenance is outside the hash chain, so this says what
    the file claims, not what happened; a row that records none is counted, not judged.
    """
    provenance = row.values.get(PROVENANCE)
    writer = writer_of(provenance)
    report.writers[writer] = report.writers.get(writer, 0) + 1
    event = row.event
    if event is None or provenance is None or not domain.signed(state):
        return
    if not (from_intake(provenance) or copied(provenance)) and domain.table_word(event):
        kind = type(event).__struct_config__.tag
        report.problem(
            f"row {row.values['seq']}: {kind} for table {getattr(event, 'table_id', '')} says "
            f"it came from {provenance}: a signed journal takes a table's word only from the "
            "daemon's intake (its provenance was edited, or the row written into the file)"
        )


def each_provenance(events: Sequence[AnyEvent], provenance: Provenances) -> list[str | None]:
    """One provenance per event: the one given for all, or the one given for each."""
    if provenance is None or isinstance(provenance, str):
        return [provenance] * len(events)
    if len(provenance) != len(events):
        raise ValueError(f"{len(provenance)} provenances for {len(events)} events")
    return list(provenance)
