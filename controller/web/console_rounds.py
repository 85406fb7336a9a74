"""The console's held rounds: each round the ledger holds for a supervisor, with its amounts.

A round is held when its cards cannot be right (a duplicate card, an eighth card, a hand short
at the end of the deal: controller/ledger/table_state.py, docs/faults.md). The console lists
every held round with the wagers locked on it and the contribution each made to its pool, as
the ledger recorded them at lock: what a void returns to the seats and takes back off the
meters, exactly (docs/money.md, "Voids"). The confirmation of a void repeats them, read from
the state the void was drafted against (controller/web/console_drafts.py).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.effects import fraction_text
from controller.ledger.table_state import Phase
from controller.web.console_words import exact_amount, void_confirmation

if TYPE_CHECKING:
    from controller.ledger.state import LedgerState


def held_rounds(state: LedgerState) -> list[dict[str, Any]]:
    """Every round held for a supervisor, by table."""
    return [
        round_view(state, table_id, live.round_id)
        for table_id, live in sorted(state.table_states.items())
        if live.phase is Phase.HELD and live.round_id
    ]


def round_view(state: LedgerState, table_id: str, round_id: str) -> dict[str, Any]:
    """A round's locked wagers and their contributions, and what voiding it does."""
    live = state.table_states.get(table_id)
    wagers = sorted(state.rounds.get((table_id, round_id), ()), key=lambda w: (w.seat, w.spot))
    rows: list[dict[str, Any]] = []
    refund = Fraction(0)
    for wager in wagers:
        contribution = wager.contribution
        made = (
            Fraction(0)
            if contribution is None
            else contribution.to_meter + contribution.to_reserve + contribution.to_overflow
        )
        refund += made
        rows.append(
            {
                "seat": wager.seat,
                "spot": str(wager.spot),
                "amount_cents": wager.amount_cents,
                "contribution": fraction_text(made),
                "contribution_text": exact_amount(made),
            }
        )
    returned = sum(wager.amount_cents for wager in wagers)
    return {
        "table_id": table_id,
        "round_id": round_id,
        "held_reason": live.held_reason if live is not None and live.round_id == round_id else "",
        "wagers": rows,
        "returned_cents": returned,
        "refund": fraction_text(refund),
        "refund_text": exact_amount(refund),
        "words": void_confirmation(table_id, round_id, returned, refund),
    }
