"""An SQLite journal's named reads for reports, displays and metrics: how the file runs them.

The reads themselves are every backend's (:class:`controller.journal.read_side.ReadSide`);
:class:`FileReadSide` runs them through sqlite-utils on whatever connection its journal gives
as ``reader``: the journal's read-only one for the display and metrics, which never touches
the writer's connection a commit may be using (docs/journal.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from controller.journal.read_side import Dialect, ReadSide
from controller.journal.sqlite.payouts import payouts_after

if TYPE_CHECKING:
    from collections.abc import Sequence

    import sqlite_utils

    from controller.effects import PayoutMade

FILE: Final = Dialect(mark="?")
"""The file's queries: ``?`` parameters; the ``payouts`` keep the order they were written in."""
LAST_VERIFIED: Final = FILE.last_verified()
"""The newest pays verified, through the index ``payouts_verified`` (journal/schema.py)."""


class FileReadSide(ReadSide):
    """The named reads, as methods of a journal that has a read-only connection (``reader``)."""

    dialect: ClassVar[Dialect] = FILE

    @property
    def reader(self) -> sqlite_utils.Database:
        """The connection the reads run on; a journal backend provides it."""
        raise NotImplementedError

    def query(self, query: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
        """The rows a query selects, on the reads' connection."""
        return [dict(row) for row in self.reader.query(query, list(params))]

    def payouts_since(self, seq: int) -> list[tuple[int, str, PayoutMade]]:
        """Each payout made after row ``seq``, as made (:mod:`.sqlite.payouts`)."""
        return payouts_after(self.reader.conn, seq)
