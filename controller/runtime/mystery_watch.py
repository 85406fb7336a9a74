"""The daemon's side of a sealed trigger: a draw at each reseed, the keeper asked after each feed.

The ledger (controller/ledger/mystery_level.py) keeps, for each mystery level, the feeds of the
last event that fed it, and takes a reveal only if one of them reached the trigger. So the
sequencer ends a batch at each event that feeds a mystery level (:meth:`MysteryWatch.feeds`)
and, once it is committed, asks the keeper before it takes another event
(:meth:`MysteryWatch.owed`): the keeper answers "not yet", or the reveal, which the sequencer
journals as the controller's own ``mystery-revealed`` row. A level without an open draw (at its
opening, after each hit, after a restart that came between the two) is drawn for at once, as
``mystery-drawn``; until then the ledger refuses the pool's wagers, so that no cent is wagered
on the level without a trigger committed to.

Crash order (controller/mystery/keeper.py): the daemon journals a feed before it asks about it,
and asks again after a restart (the meter before the last event is its own last question):
the keeper answers a question asked twice the same way. An answer that shows someone else
asked the keeper raises :class:`~controller.mystery.keeper.MysteryAlarmError`, and the
sequencer fails closed: a person must look before the level plays on a trigger someone may
know (docs/security.md, "Mystery levels: the sealed trigger").
"""

from __future__ import annotations

from math import floor
from typing import TYPE_CHECKING

import msgspec

from controller.events import BetsLocked, WagerLocked
from controller.mystery.core import DrawRequest, Meter
from controller.mystery.keeper import Query
from controller.mystery_events import MysteryDrawn, MysteryRevealed
from controller.runtime.remote_signer import RemoteSigner

if TYPE_CHECKING:
    from collections.abc import Callable
    from fractions import Fraction

    from controller.events import AnyEvent
    from controller.ledger.apply import LedgerState
    from controller.ledger.pool import Pool
    from controller.mystery.core import Drawn
    from controller.mystery.envelope import Envelope
    from controller.mystery.keeper import Keeper, Verdict


def meter_of(value: Fraction) -> Meter:
    """A level's exact meter as the keeper is asked about it."""
    whole = floor(value)
    part = value - whole
    return Meter(whole, part.numerator, part.denominator)


def mystery_pools(state: LedgerState) -> list[Pool]:
    """The mystery levels the ledger holds, by id."""
    return [
        pool
        for _, pool in sorted(state.pools.items())
        if pool.terms.must_hit_by_cents is not None and not pool.status
    ]


class MysteryWatch:
    """Draws and questions for the journal's mystery levels (see the module docstring)."""

    def __init__(
        self, keeper: Keeper, controller: str, key_id: str, clock: Callable[[], str]
    ) -> None:
        self.keeper = keeper
        self.controller = controller
        self.key_id = key_id
        self.clock = clock
        self._asked: dict[str, tuple[int, Fraction]] = {}
        self._drawing: dict[str, int] = {}
        """The draw last journaled for each level: one the ledger refused is not asked again."""
        self._taken: dict[str, int] = {}
        """The other keys' draws this process's keeper adopted, by level."""

    def feeds(self, state: LedgerState, event: AnyEvent) -> bool:
        """Whether ``event`` may contribute to a mystery level: it ends its batch."""
        if not isinstance(event, BetsLocked | WagerLocked):
            return False
        rules = state.tables.get(event.table_id)
        paytable = rules.progressive if rules is not None else None
        return paytable is not None and any(level.mystery for level in paytable.levels)

    async def owed(self, state: LedgerState) -> AnyEvent | None:
        """The controller's next mystery row: a draw owed, or a reveal (None: nothing owed)."""
        if state.binding is None:  # a draw names the journal's identity: none yet
            return None
        journal = state.binding.journal
        for pool in mystery_pools(state):
            level = pool.pool_id.rpartition(".")[2]
            if pool.draw is None:
                if self._drawing.get(pool.pool_id) == pool.draws + 1:
                    continue  # refused by the ledger: its row says why; a person must look
                self._drawing[pool.pool_id] = pool.draws + 1
                return await self._drawn(pool, journal, level)
            asked = (pool.draw.draw, pool.meter)
            if not pool.fed or self._asked.get(pool.pool_id) == asked:
                continue
            await self._adopted(pool)
            query = Query(
                self.controller, journal, pool.pool_id, level, pool.draw.draw, meter_of(pool.meter)
            )
            verdict = await self._check(query, meter_of(pool.fed[0].before))
            self._asked[pool.pool_id] = asked
            if verdict.reveal is not None:
                event_id = f"mystery/{pool.pool_id}/{pool.draw.draw}/revealed"
                return MysteryRevealed(event_id, self.clock(), verdict.reveal)
        return None

    async def _drawn(self, pool: Pool, journal: str, level: str) -> MysteryDrawn:
        ceiling = pool.terms.must_hit_by_cents
        assert ceiling is not None  # noqa: S101 - mystery_pools holds only mystery levels
        request = DrawRequest(
            self.controller, journal, pool.pool_id, level, pool.draws + 1,
            pool.terms.seed_cents, ceiling, self.key_id, self.clock(),
        )  # fmt: skip
        drawn = await self._draw(request)
        sealed = await self._envelope(drawn)
        return MysteryDrawn(
            f"mystery/{pool.pool_id}/{drawn.draw}/drawn", self.clock(), drawn,
            msgspec.UNSET if sealed is None else sealed,
        )  # fmt: skip

    async def _adopted(self, pool: Pool) -> None:
        """The open draw taken by this keeper from its envelope, once per draw and process.

        A draw another node's key made (a failover, docs/ha.md "Mystery levels across a
        failover"), or this node's own that its keeper no longer holds (a keeper in memory, on
        a PostgreSQL journal, restarted), is adopted at the meter before the last event's feeds:
        the last its keeper can have been asked about. A keeper that holds it already keeps it
        as it is (its own view included); a draw journaled without an envelope is left to the
        keeper's own file, and a keeper without it refuses the check (fail closed).
        """
        drawn = pool.draw
        assert drawn is not None  # noqa: S101 - owed asks only about an open draw
        if self._taken.get(pool.pool_id) == drawn.draw:
            return
        if pool.sealed is None:  # no envelope: the keeper holds it (its file), or says it does not
            return
        since = meter_of(pool.fed[0].before) if pool.fed else meter_of(pool.meter)
        keeper = self.keeper
        if isinstance(keeper, RemoteSigner):
            await keeper.adopt_async(drawn, pool.sealed, since)
        else:
            keeper.adopt(drawn, pool.sealed, since)
        self._taken[pool.pool_id] = drawn.draw

    async def _envelope(self, drawn: Drawn) -> Envelope | None:
        keeper = self.keeper
        if isinstance(keeper, RemoteSigner):
            return await keeper.envelope_async(drawn)
        return keeper.envelope(drawn)

    async def _draw(self, request: DrawRequest) -> Drawn:
        keeper = self.keeper
        if isinstance(keeper, RemoteSigner):
            return await keeper.draw_async(request)
        return keeper.draw(request)

    async def _check(self, query: Query, since: Meter) -> Verdict:
        keeper = self.keeper
        if isinstance(keeper, RemoteSigner):
            return await keeper.check_async(query, since)
        return keeper.check(query, since)
