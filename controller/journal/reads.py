"""The journal's reads for reports, displays and metrics: the typed rows every backend gives.

The pending payouts, the hits and the payout records that
:class:`controller.journal.port.JournalPort` offers, as the reports, the display and the metrics
read them, whichever backend reads them: the queries are written once
(:mod:`controller.journal.read_side`), and each backend runs them (the SQLite file's
:mod:`controller.journal.sqlite.reads`, PostgreSQL's :mod:`controller.journal.postgres.reads`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from controller.effects import PayoutMade


class PendingPayout(msgspec.Struct, frozen=True, kw_only=True):
    """A payout awaiting a supervisor's verification, as the floor display lists it."""

    payout_id: str
    table_id: str
    seat: int
    line: str | None
    win_cents: int
    hand: str
    at: str
    tax_report: bool


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """A progressive hit paid (at least in part) from a pool's meter."""

    payout_id: str
    at: str
    pool_id: str | None
    table_id: str
    seat: int
    line: str | None
    win_cents: int


class PayoutRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A row of the ``payouts`` table: the payout as it stands, and where the journal has it."""

    payout: PayoutMade
    seq: int
    at: str
    verified_by: str | None
    verified_seq: int | None

    def row(self) -> dict[str, Any]:
        """The row with the table's column names, in its column order (docs/journal.md)."""
        payout = msgspec.structs.asdict(self.payout)
        hand = payout.pop("hand")
        where = {"seq": self.seq, "at": self.at}
        verified = {"verified_by": self.verified_by, "verified_seq": self.verified_seq}
        return {"payout_id": payout.pop("payout_id"), **where, **payout, **verified, "hand": hand}


def payout_record(row: dict[str, Any]) -> PayoutRecord:
    """A ``payouts`` row as a :class:`PayoutRecord`."""
    made = {name: row[name] for name in PayoutMade.__struct_fields__}
    made["tax_report"] = bool(made["tax_report"])
    return PayoutRecord(
        payout=PayoutMade(**made),
        seq=row["seq"],
        at=row["at"],
        verified_by=row["verified_by"],
        verified_seq=row["verified_seq"],
    )
