"""The journal opened to read and never to write, whichever backend holds it.

The supervisors' and auditors' commands (``jackpotd meters``, ``hits``, ``report``,
``verify``, ``operator list``, ``manifest check``) read through :class:`JournalReader`, which
:func:`controller.journal.backends.open_reader` opens for a location: an SQLite file read only
(:mod:`controller.journal.sqlite.readonly`), a PostgreSQL database
(:mod:`controller.journal.postgres.readonly`), a journal in memory. The pays they list are
chosen by :class:`PayFilter`, whose query (:func:`pay_query`) each backend runs in its own
words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from controller.rules.spots import spec_of, spots

if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime

    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import RecordedState
    from controller.journal.location import JournalLocation
    from controller.journal.reads import PayoutRecord
    from controller.journal.rows import Row


def pay_kinds() -> dict[str, str]:
    """Which ``payouts`` rows each kind of pay is (docs/operations.md, "Words").

    A pay is an amount won on a wager (``win_cents`` above 0: a loss, a push or a void pays
    nothing); a jackpot is a progressive pay from a pool's meter; a progressive pay may instead
    be fixed (the $4 of a full house); odds pays are ``win`` on their spot, one kind for each
    odds spot the registry holds (controller/rules/spots.py: ``bonus``, ``ace-high``, ...);
    Envy bonuses their own.
    """
    odds = {
        str(spot): f"kind = 'win' AND spot = '{spot}'" for spot in spots() if spec_of(spot).odds
    }
    return {
        "jackpot": "kind = 'progressive' AND from_meter_cents > 0",
        "progressive": "kind = 'progressive'",
        **odds,
        "envy": "kind = 'envy'",
        "all": "kind IN ('win', 'progressive', 'envy')",
    }


@dataclass(frozen=True, slots=True)
class PayFilter:
    """Which pays to list: their kinds (keys of :func:`pay_kinds`) and bounds."""

    kinds: tuple[str, ...]
    pending_only: bool = False
    pool_id: str | None = None
    since: datetime | None = None
    """From the first pay dated then or later (pays are taken in journal order)."""
    limit: int | None = None


def pay_query(
    chosen: PayFilter,
    *,
    mark: str = "?",
    dated: str = "julianday(at) >= julianday(?)",
    by_id: str = "payout_id",
) -> tuple[str, list[object]]:
    """The query of the pays ``chosen`` and its parameters, in a backend's words.

    ``mark`` is its parameter marker, ``dated`` its test of a pay's time against one given,
    ``by_id`` its order of payout ids (SQLite compares text byte by byte).
    """
    known = pay_kinds()
    kinds = " OR ".join(f"({known[kind]})" for kind in chosen.kinds) or "1 = 0"
    where, params = [f"({kinds})", "win_cents > 0"], list[object]()
    if chosen.pending_only:
        where.append("status = 'pending'")
    if chosen.pool_id is not None:
        where.append(f"pool_id = {mark}")
        params.append(chosen.pool_id)
    if chosen.since is not None:
        # In journal order: from the first pay dated ``since`` or later (a clock step may date
        # a later row earlier; docs/faults.md, "Clock steps").
        first = f"SELECT min(seq) FROM payouts WHERE {dated}"  # noqa: S608 - fixed fragments
        where.append(f"seq >= coalesce(({first}), {1 << 62})")
        params.append(chosen.since.isoformat())
    query = (
        f"SELECT * FROM payouts WHERE {' AND '.join(where)} "  # noqa: S608 - fixed fragments
        f"ORDER BY seq DESC, seat, {by_id}"
    )
    if chosen.limit is not None:
        query += f" LIMIT {mark}"
        params.append(chosen.limit)
    return query, params


_Read_co = TypeVar("_Read_co", bound="RecordedState", covariant=True)


class JournalReader(Protocol[_Read_co]):
    """A journal opened read only, whichever backend holds it: what the reading commands use.

    :class:`ReadOnlyJournal` reads an SQLite file;
    :class:`controller.journal.postgres.readonly.PostgresReader` a PostgreSQL database;
    :func:`controller.journal.backends.open_reader` opens the one a location names.
    """

    @property
    def path(self) -> JournalLocation:
        """Where the journal is: its file, or its database's URL (shown without a password)."""

    @property
    def state(self) -> _Read_co:
        """The domain's state as the journal has it materialized."""

    def pays(self, chosen: PayFilter) -> list[PayoutRecord]:
        """The pays ``chosen``, the newest round first and by seat within a round."""

    def rows(self, after: int = 0) -> Iterator[dict[str, Any]]:
        """Every journal row after row ``after``, in order, in its canonical form."""

    def provenances(self) -> Iterator[tuple[int, str | None]]:
        """Each row's ``seq`` and provenance, in order (None: not recorded)."""

    def read(self, after: int = 0) -> Iterator[Row]:
        """Every journal row after row ``after``, in order, with its event read back."""

    def snapshots(self) -> list[StoredSnapshot]:
        """The snapshots of signed checkpoints the journal keeps, newest first."""

    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...
