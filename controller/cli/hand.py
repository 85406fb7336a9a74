"""``jackpotd hand``: settle a dispute: the best five cards, the joker's role and the line won."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from controller.cli.common import command
from controller.money import format_cents, parse_dollars
from controller.rules.cards import JokerMode, SevenCardHand
from controller.rules.paytable import Wager
from controller.rules.paytable_files import PaytableError, find_paytable
from controller.rules.qualify import ace_high_outcomes, qualifier
from controller.rules.ranking import AceFive, best_five

if TYPE_CHECKING:
    import argparse

    from controller.rules.paytable import Paytable, PaytableLine

INSURANCE_JOKER = (
    "the insurance wager ranks the joker as an ace and nothing else (N.J.A.C. 13:69F-11.2(h)); "
    "the best five above may use it otherwise"
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hand`` to the command line."""
    parser = command(
        commands,
        "hand",
        help="show a seven-card hand's best five cards and the line it wins",
        description=(
            "CARDS are seven codes such as 'As Kd Tc 9h 5s 3c Jk', in any letter case "
            "(10 for T is fine), or as the meter display draws them: 'A♠ K♦ 10♣ 9♥ 5♠ 3♣ Joker'."
        ),
        examples=(
            "  jackpotd hand 'As Ks Qs Js Jk Kh Qh' --paytable fortune-1\n"
            "  jackpotd hand 'A♠ K♠ Q♠ J♠ Joker K♥ Q♥' --paytable fortune-1\n"
            "  jackpotd hand Ac Ad Ah As Jk 2c 3d --paytable progressive-5 --meter '$12,345.67'\n"
            "  jackpotd hand 'As Kd Qc 9s 7h 3c 2d' --paytable ace-high-2 --dealer "
            "'Jk Kh Qh 9c 7d 3d 2h'"
        ),
    )
    parser.add_argument("cards", nargs="+", help="the seven cards (one string or seven words)")
    parser.add_argument("--paytable", help="a paytable name or .toml path to classify against")
    parser.add_argument("--dealer", help="the dealer's seven cards (Ace High paytables)")
    parser.add_argument(
        "--ace-five",
        choices=[option.value for option in AceFive],
        default=AceFive.SECOND_HIGHEST.value,
        help="where A-2-3-4-5 ranks (NJ 13:69F-11(d) allows 'lowest')",
    )
    parser.add_argument(
        "--meter",
        type=parse_dollars,
        help="the meter, e.g. '$12,345.67', for a progressive paytable (default: its seed)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def _winning_row(
    hand: SevenCardHand, dealer_text: str | None, table: Paytable, meter_cents: int
) -> PaytableLine | None:
    mask = qualifier(table.joker)(hand.indices)
    if not table.dealer_and_player:
        return table.line_for(mask, meter_cents)
    if dealer_text is None:
        raise PaytableError(table.name, "--dealer", "an Ace High paytable needs the dealer's hand")
    dealer = SevenCardHand.parse_lenient(dealer_text)
    if set(dealer.cards) & set(hand.cards):
        raise PaytableError(table.name, "--dealer", "the dealer and the player share a card")
    return table.line_for(ace_high_outcomes(qualifier(table.joker)(dealer.indices), mask))


def run(args: argparse.Namespace) -> int:
    """Print the evaluation of one hand."""
    hand = SevenCardHand.parse_lenient(" ".join(args.cards))
    table = find_paytable(args.paytable) if args.paytable else None
    mode = table.joker if table is not None else JokerMode.SEMI_WILD
    best = best_five(hand, mode, AceFive(args.ace_five))
    meter = args.meter if args.meter is not None else (table.seed_cents if table else 0)
    row = _winning_row(hand, args.dealer, table, meter) if table is not None else None
    progressive = table is not None and table.progressive is not None
    report: dict[str, Any] = {
        "cards": [card.code for card in hand],
        "best_five": [card.code for card in best.cards],
        "rank": best.value.describe(),
        "joker_as": best.joker_as.code if best.joker_as is not None else None,
        "paytable": table.name if table is not None else None,
        "line": str(row.line) if row is not None else None,
        "outcome": row.outcome if row is not None else None,
        "pays": str(row.pays) if row is not None else None,
        "envy_cents": row.envy_cents if row is not None else None,
        "meter_cents": meter if progressive else None,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    joker = f" (joker as {report['joker_as']})" if report["joker_as"] else ""
    print(f"Cards:     {' '.join(report['cards'])}")
    print(f"Best five: {' '.join(report['best_five'])}{joker}: {report['rank']}")
    if table is not None:
        at_meter = f", meter {format_cents(meter)}" if progressive else ""
        print(f"Paytable:  {table.name} ({table.title}), joker {mode.value}{at_meter}")
        if row is None:
            print("Line:      none, the wager loses")
        else:
            envy = f", Envy {format_cents(row.envy_cents)}" if row.envy_cents else ""
            print(f"Line:      {row.outcome}: pays {row.pays}{envy}")
        if table.wager is Wager.INSURANCE:
            print(f"Note:      {INSURANCE_JOKER}")
    return 0
