"""Random event histories played through the pure ledger, with the money tallied beside it.

:func:`play` draws a history: pools opened and tables configured, then rounds, adjustments,
changes of terms, verifications, voids and nonsense in any order, every event applied through
a :class:`Harness` that checks the ledger's properties after each. The parts live beside this
module, and their names are given here too, as the tests import them:
tests/support/ledger/history_values.py (what histories are drawn from), history_harness.py (the
harness and its books), history_pools.py (pools, tables and what happens to them between
rounds) and history_rounds.py (rounds played, settled and voided).
"""

from __future__ import annotations

from hypothesis import strategies as st

from support.ledger.history_harness import Books, Harness
from support.ledger.history_pools import (
    adjust,
    change_terms,
    configure_tables,
    nonsense,
    open_pools,
    verify,
)
from support.ledger.history_rounds import deal, jackpot, play_round, void_later, void_round
from support.ledger.history_values import (
    ACCOUNTS,
    AT,
    BIG_HANDS,
    BONUS,
    BONUS_AMOUNTS,
    BONUS_LIMITS,
    CODES,
    PAYTABLES,
    PROGRESSIVES,
    RATES,
    RESERVE_RATES,
)

__all__ = [
    "ACCOUNTS",
    "AT",
    "BIG_HANDS",
    "BONUS",
    "BONUS_AMOUNTS",
    "BONUS_LIMITS",
    "CODES",
    "PAYTABLES",
    "PROGRESSIVES",
    "RATES",
    "RESERVE_RATES",
    "Books",
    "Harness",
    "adjust",
    "change_terms",
    "configure_tables",
    "deal",
    "jackpot",
    "nonsense",
    "open_pools",
    "play",
    "play_round",
    "verify",
    "void_later",
    "void_round",
]


def play(data: st.DataObject) -> Harness:
    harness = Harness()
    pool_ids = open_pools(data, harness)
    table_ids = configure_tables(data, harness, pool_ids)
    steps = data.draw(st.integers(3, 25), label="steps")
    for _ in range(steps):
        step = data.draw(
            st.sampled_from(
                ["round"] * 6 + ["adjust", "terms", "terms", "verify", "nonsense", "void", "void"]
            ),
            label="step",
        )
        if step == "round":
            play_round(data, harness, data.draw(st.sampled_from(table_ids)))
        elif step == "adjust":
            adjust(data, harness, data.draw(st.sampled_from(pool_ids)))
        elif step == "terms":
            change_terms(data, harness, data.draw(st.sampled_from(pool_ids)))
        elif step == "verify":
            verify(data, harness)
        elif step == "void":
            void_later(data, harness)
        else:
            nonsense(data, harness)
    return harness
