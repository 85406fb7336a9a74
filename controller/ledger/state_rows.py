"""The ledger's state read back from the journal's materialized rows (at start-up).

The journal materializes its state with every commit, in the domain's encodings
(:mod:`controller.ledger.codec`): pools, tables, live table states, open rounds, pending
payouts, operators, and the configuration revision and approved manifest in ``meta``. Each
backend reads those rows with the same queries
(:data:`controller.journal.restore.STATE_QUERIES`) and hands them here, through the domain
(:data:`controller.ledger.domain.LEDGER`), to become the state again: the journal stores and
reads rows, and the ledger alone knows what they hold.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.effects import Contributed
from controller.events import TableConfigured, decode_event
from controller.ledger.apply import LedgerState
from controller.ledger.codec import (
    authority_from_json,
    binding_from_json,
    chain_from_json,
    manifest_from_json,
    payout_from_row,
    pool_from_json,
    sites_from_json,
    table_state_from_json,
    wagers_from_json,
)
from controller.ledger.operators import Authority, Operator, Role
from controller.ledger.pool import Contribution
from controller.ledger.settlement import SeatWager
from controller.ledger.table_rules import table_rules
from controller.rules.spots import Spot

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from controller.effects import AnyEffect


def state_from_rows(
    rows: Mapping[str, Iterable[Mapping[str, Any]]],
    locks: Callable[[], Iterable[tuple[AnyEffect, ...]]],
) -> LedgerState:
    """The ledger state in the rows of each of the state's queries (named columns).

    ``locks`` gives the effects of each applied lock row of the journal (``bets-locked``,
    ``wager-locked``), in order, needed only for a round stored before contributions were
    kept with its wagers. Raises ValueError or TypeError on a row that holds something else.
    """
    pools = {row["pool_id"]: pool_from_json(row["state"]) for row in rows["pools"]}
    events = {}
    for row in rows["tables"]:
        event = decode_event(row["config"])
        if not isinstance(event, TableConfigured):
            raise TypeError(
                f"table {row['table_id']}: stored configuration is a {type(event).__name__}"
            )
        events[row["table_id"]] = event
    rounds = {
        (row["table_id"], row["round_id"]): wagers_from_json(row["wagers"])
        for row in rows["rounds"]
    }
    rounds = _with_contributions(locks, rounds)
    pending = {row["payout_id"]: payout_from_row(dict(row)) for row in rows["pending"]}
    meta = {row["key"]: row["value"] for row in rows["meta"]}
    live = {row["table_id"]: table_state_from_json(row["state"]) for row in rows["table_states"]}
    operators = {
        row["name"]: Operator(
            row["name"], Role(row["role"]), row["salt"], row["pin_hash"], row["kdf"],
            row["public_key"], int(row["failures"]), bool(row["locked"]),
        )
        for row in rows["operators"]
    }  # fmt: skip
    return LedgerState(
        authority=authority_from_json(meta["authority"]) if "authority" in meta else Authority(),
        manifest=manifest_from_json(meta["manifest"]) if "manifest" in meta else None,
        operators=operators,
        pools=pools,
        tables={table_id: table_rules(event) for table_id, event in events.items()},
        table_events=events,
        table_states=live,
        rounds=rounds,
        pending=pending,
        revision=int(meta["revision"]) if "revision" in meta else 0,
        sites=sites_from_json(meta["sites"]) if "sites" in meta else {},
        chain=chain_from_json(meta["chain"]) if "chain" in meta else None,
        binding=binding_from_json(meta["binding"]) if "binding" in meta else None,
    )


Rounds = dict[tuple[str, str], tuple[SeatWager, ...]]


def _with_contributions(
    locks: Callable[[], Iterable[tuple[AnyEffect, ...]]], rounds: Rounds
) -> Rounds:
    """Open rounds whose progressive wagers all carry the contribution they made at lock.

    A round stored before contributions were kept with their wagers (left open when the
    controller was upgraded) lacks them; a void must reverse them exactly, and a replay from
    empty records them, so they are read from the ``contributed`` effects journaled with the
    lock, the last one for each table, round and seat (round ids may come back).
    """
    missing = {
        (table_id, round_id, wager.seat)
        for (table_id, round_id), wagers in rounds.items()
        for wager in wagers
        if wager.spot is Spot.PROGRESSIVE and wager.contribution is None and not wager.levels
    }  # a multi-level pool's wager keeps each level's contribution (ledger/levels.py)
    if not missing:
        return rounds
    found: dict[tuple[str, str, int], Contribution] = {}
    for effects in locks():
        for effect in effects:
            if not isinstance(effect, Contributed):
                continue
            key = (effect.table_id, effect.round_id, effect.seat)
            if key in missing:
                found[key] = Contribution(
                    effect.wager_cents, Fraction(effect.to_meter),
                    Fraction(effect.to_reserve), Fraction(effect.to_overflow),
                )  # fmt: skip
    # A wager no lock contributed for is not one the journal made: it stays without, so that
    # `jackpotd verify` reports the round and the ledger refuses to reverse what it never added.
    return {
        (table_id, round_id): tuple(
            replace(wager, contribution=found.get((table_id, round_id, wager.seat)))
            if wager.spot is Spot.PROGRESSIVE and wager.contribution is None
            else wager
            for wager in wagers
        )
        for (table_id, round_id), wagers in rounds.items()
    }
