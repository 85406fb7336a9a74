"""The seven-card lines a paytable can pay, each defined once, with the seed clause it comes from.

A *line* is a predicate over a seven-card hand: "the seven cards contain X". A hand usually
qualifies for several lines at once (a royal flush is also a straight flush and a flush); a
paytable pays the first of its lines, in the seed's order of pay, that the hand qualifies for
(see :mod:`controller.rules.paytable`). Each line may use the joker its own way, within the joker
mode of the paytable.

The Ace High outcomes of Face Up Pai Gow are about two hands, the dealer's and the player's,
dealt from one deck; :func:`controller.rules.qualify.ace_high_outcomes` derives them from the
per-hand ``ACE_HIGH_*`` lines.

The ``INSURANCE_*`` lines are the New Jersey insurance wager's: a *pai gow* hand (no pair,
straight or flush) named by its top card, the joker ranked as an ace and nothing else
(N.J.A.C. 13:69F-11.2(h)). Whichever joker mode the paytable states, these lines read the
joker so.

Every line has one bit, so the set of lines a hand qualifies for is a plain ``int``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class Line(StrEnum):
    """Every line the rules engine can recognise, named by its slug in the paytable files."""

    SEVEN_CARD_STRAIGHT_FLUSH_NATURAL = "seven-card-straight-flush-natural"
    SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER = "seven-card-straight-flush-with-joker"
    SEVEN_CARD_STRAIGHT_FLUSH = "seven-card-straight-flush"
    ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN = "royal-flush-plus-natural-suited-king-queen"
    ROYAL_FLUSH_PLUS_SUITED_ACE_KING = "royal-flush-plus-natural-suited-ace-king"
    ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN = "royal-flush-plus-natural-suited-ace-queen"
    NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN = "natural-royal-flush-plus-natural-suited-ace-queen"
    NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING = "natural-royal-flush-plus-natural-suited-ace-king"
    NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN = (
        "natural-ace-five-straight-flush-plus-natural-suited-ace-queen"
    )
    NATURAL_ACE_FIVE_STRAIGHT_FLUSH = "natural-ace-five-straight-flush"
    FIVE_ACES = "five-aces"
    FIVE_OF_A_KIND = "five-of-a-kind"
    ROYAL_FLUSH = "royal-flush"
    NATURAL_ROYAL_FLUSH = "natural-royal-flush"
    STRAIGHT_FLUSH = "straight-flush"
    STRAIGHT_FLUSH_WITHOUT_JOKER = "straight-flush-without-joker"
    STRAIGHT_FLUSH_WITH_JOKER = "straight-flush-with-joker"
    FOUR_OF_A_KIND = "four-of-a-kind"
    FULL_HOUSE = "full-house"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three-of-a-kind"
    THREE_PAIR = "three-pair"
    TWO_PAIR = "two-pair"
    PAIR = "pair"
    ACE_HIGH_WITH_JOKER = "ace-high-with-joker"
    ACE_HIGH_NO_JOKER = "ace-high-no-joker"
    BOTH_ACE_HIGH = "dealer-and-player-ace-high"
    DEALER_ONLY_ACE_HIGH_WITH_JOKER = "dealer-only-ace-high-with-joker"
    DEALER_ONLY_ACE_HIGH_NO_JOKER = "dealer-only-ace-high-no-joker"
    INSURANCE_ACE_HIGH = "insurance-ace-high"
    INSURANCE_ACE_HIGH_WITH_JOKER = "insurance-ace-high-with-joker"
    INSURANCE_ACE_HIGH_NO_JOKER = "insurance-ace-high-no-joker"
    INSURANCE_KING_HIGH = "insurance-king-high"
    INSURANCE_QUEEN_HIGH = "insurance-queen-high"
    INSURANCE_JACK_HIGH = "insurance-jack-high"
    INSURANCE_TEN_HIGH = "insurance-ten-high"
    INSURANCE_NINE_HIGH = "insurance-nine-high"

    @property
    def bit(self) -> int:
        """This line's bit in a qualifying mask."""
        return BIT[self]

    @property
    def definition(self) -> LineDefinition:
        """What the line means and where the seeds define it."""
        return DEFINITIONS[self]


@dataclass(frozen=True, slots=True)
class LineDefinition:
    """The plain-words meaning of a line and the seed clauses that define it."""

    label: str
    meaning: str
    sources: tuple[str, ...]
    dealer_and_player: bool = False


BIT: Final[dict[Line, int]] = {line: 1 << position for position, line in enumerate(Line)}

PA: Final = "58 Pa. Code § 645a.6"
NJ: Final = "N.J.A.C. 13:69F-11"
FACE_UP: Final = "58 Pa. Code § 688a.12(b)"
INSURANCE: Final = f"{NJ}.2(h)"
"""The insurance wager's joker rule; the wager itself is 13:69F-11.15, not in the seeds."""
INSURANCE_PAI_GOW: Final = "a pai gow hand with the joker an ace (no pair, straight or flush)"

DEFINITIONS: Final[dict[Line, LineDefinition]] = {
    Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL: LineDefinition(
        "7 card straight flush, no joker",
        "seven natural cards of one suit in consecutive ranks (ace high, or low in A-7)",
        (f"{PA}(d)(1)", f"{PA}(e)(1)", f"{PA}(g)(2)", f"{NJ}(f)1", f"{NJ}(i)2"),
    ),
    Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER: LineDefinition(
        "7 card straight flush with joker",
        "six cards of one suit and the joker in seven consecutive ranks",
        (f"{PA}(d)(3)", f"{PA}(e)(3)", f"{PA}(g)(4)", f"{NJ}(f)3", f"{NJ}(i)4"),
    ),
    Line.SEVEN_CARD_STRAIGHT_FLUSH: LineDefinition(
        "7 card straight flush",
        "a seven-card straight flush with or without the joker",
        (f"{PA}(f)(1)",),
    ),
    Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN: LineDefinition(
        "Royal flush + royal match (K-Q)",
        "a royal flush, natural or with the joker, and a natural king and queen of another suit",
        (f"{PA}(d)(2)(ii)", f"{NJ}(f)2.i"),
    ),
    Line.ROYAL_FLUSH_PLUS_SUITED_ACE_KING: LineDefinition(
        "Royal flush + royal match (A-K)",
        "a royal flush, natural or with the joker, and a natural ace and king of another suit",
        (f"{PA}(d)(2)(i)", f"{PA}(e)(2)", f"{NJ}(f)2.ii"),
    ),
    Line.ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN: LineDefinition(
        "Royal flush with suited ace and queen",
        "a royal flush, natural or with the joker, and a natural ace and queen of another suit",
        (f"{NJ}(i)3",),
    ),
    Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_QUEEN: LineDefinition(
        "Natural royal flush + natural suited A-Q",
        "a natural royal flush and a natural ace and queen of another suit (the text of (g)(3))",
        (f"{PA}(g)(3)",),
    ),
    Line.NATURAL_ROYAL_FLUSH_PLUS_SUITED_ACE_KING: LineDefinition(
        "Natural royal flush + natural suited A-K",
        "a natural royal flush and a natural ace and king of another suit (the caption of (g)(3))",
        (f"{PA}(g)(3)",),
    ),
    Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH_PLUS_SUITED_ACE_QUEEN: LineDefinition(
        "A-5 natural straight flush + natural suited A-Q",
        "a natural A-2-3-4-5 of one suit and a natural ace and queen of another suit",
        (f"{PA}(g)(1)", f"{NJ}(i)1"),
    ),
    Line.NATURAL_ACE_FIVE_STRAIGHT_FLUSH: LineDefinition(
        "A-5 natural straight flush",
        "a natural A-2-3-4-5 of one suit",
        (f"{PA}(g)(5)",),
    ),
    Line.FIVE_ACES: LineDefinition(
        "Five aces", "the four aces and the joker", (f"{PA}(b)(1)", f"{PA}(f)(2)", f"{NJ}(b)1")
    ),
    Line.FIVE_OF_A_KIND: LineDefinition(
        "Five of a kind",
        "four cards of a rank and the fully wild joker (five aces included)",
        ("58 Pa. Code § 688a.12(d) Paytables 2, 5, 6",),
    ),
    Line.ROYAL_FLUSH: LineDefinition(
        "Royal flush",
        "A-K-Q-J-10 of one suit, the joker may stand for one of them",
        (f"{PA}(b)(2)", f"{PA}(f)(3)", f"{NJ}(b)2"),
    ),
    Line.NATURAL_ROYAL_FLUSH: LineDefinition(
        "Natural royal flush", "A-K-Q-J-10 of one suit without the joker", (f"{NJ}(b)2",)
    ),
    Line.STRAIGHT_FLUSH: LineDefinition(
        "Straight flush",
        "five cards of one suit in consecutive ranks, the joker may stand for one",
        (f"{PA}(b)(3)", f"{PA}(f)(4)", f"{NJ}(b)3"),
    ),
    Line.STRAIGHT_FLUSH_WITHOUT_JOKER: LineDefinition(
        "Straight flush without joker",
        "five natural cards of one suit in consecutive ranks",
        (f"{NJ}(g)",),
    ),
    Line.STRAIGHT_FLUSH_WITH_JOKER: LineDefinition(
        "Straight flush with joker",
        "four cards of one suit and the joker in five consecutive ranks",
        (f"{NJ}(g)",),
    ),
    Line.FOUR_OF_A_KIND: LineDefinition(
        "Four of a kind", "four cards of one rank", (f"{PA}(b)(4)", f"{PA}(f)(5)", f"{NJ}(b)4")
    ),
    Line.FULL_HOUSE: LineDefinition(
        "Full house",
        "three cards of one rank and two of another",
        (f"{PA}(b)(5)", f"{PA}(f)(6)", f"{NJ}(b)5"),
    ),
    Line.FLUSH: LineDefinition("Flush", "five cards of one suit", (f"{PA}(b)(6)", f"{NJ}(b)6")),
    Line.STRAIGHT: LineDefinition(
        "Straight", "five cards of consecutive ranks", (f"{PA}(b)(7)", f"{NJ}(b)7")
    ),
    Line.THREE_OF_A_KIND: LineDefinition(
        "Three of a kind", "three cards of one rank", (f"{PA}(b)(8)", f"{NJ}(b)8")
    ),
    Line.THREE_PAIR: LineDefinition(
        "Three pair",
        "pairs of three different ranks among the seven cards",
        ("58 Pa. Code § 688a.12(c) Paytable 1",),
    ),
    Line.TWO_PAIR: LineDefinition(
        "Two pair", "pairs of two different ranks", (f"{PA}(b)(9)", f"{NJ}(b)9")
    ),
    Line.PAIR: LineDefinition("Pair", "two cards of one rank", (f"{PA}(b)(10)", f"{NJ}(b)10")),
    Line.ACE_HIGH_WITH_JOKER: LineDefinition(
        "Ace high, with joker",
        "a pai gow hand (no pair, straight or flush, even with the joker) with the joker as ace",
        (FACE_UP,),
    ),
    Line.ACE_HIGH_NO_JOKER: LineDefinition(
        "Ace high, no joker",
        "a pai gow hand (no pair, straight or flush) with a natural ace and no joker",
        (FACE_UP,),
    ),
    Line.BOTH_ACE_HIGH: LineDefinition(
        "Both dealer and player have ace high",
        "the dealer's and the player's hands are both ace high",
        (FACE_UP,),
        dealer_and_player=True,
    ),
    Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER: LineDefinition(
        "Only dealer has ace high, with joker",
        "the dealer's hand is ace high with the joker as the ace; the player's is not ace high",
        (FACE_UP,),
        dealer_and_player=True,
    ),
    Line.DEALER_ONLY_ACE_HIGH_NO_JOKER: LineDefinition(
        "Only dealer has ace high, no joker",
        "the dealer's hand is ace high with a natural ace; the player's is not ace high",
        (FACE_UP,),
        dealer_and_player=True,
    ),
    Line.INSURANCE_ACE_HIGH: LineDefinition(
        "Pai gow, ace high",
        f"{INSURANCE_PAI_GOW}, topped by a natural ace or the joker",
        (INSURANCE,),
    ),
    Line.INSURANCE_ACE_HIGH_WITH_JOKER: LineDefinition(
        "Pai gow, ace high with joker",
        f"{INSURANCE_PAI_GOW}, the joker its ace (no natural ace)",
        (INSURANCE,),
    ),
    Line.INSURANCE_ACE_HIGH_NO_JOKER: LineDefinition(
        "Pai gow, ace high, no joker",
        f"{INSURANCE_PAI_GOW}, a natural ace and no joker",
        (INSURANCE,),
    ),
    Line.INSURANCE_KING_HIGH: LineDefinition(
        "Pai gow, king high",
        f"{INSURANCE_PAI_GOW}, no ace or joker, topped by a king",
        (INSURANCE,),
    ),
    Line.INSURANCE_QUEEN_HIGH: LineDefinition(
        "Pai gow, queen high", f"{INSURANCE_PAI_GOW}, topped by a queen", (INSURANCE,)
    ),
    Line.INSURANCE_JACK_HIGH: LineDefinition(
        "Pai gow, jack high", f"{INSURANCE_PAI_GOW}, topped by a jack", (INSURANCE,)
    ),
    Line.INSURANCE_TEN_HIGH: LineDefinition(
        "Pai gow, 10 high", f"{INSURANCE_PAI_GOW}, topped by a 10", (INSURANCE,)
    ),
    Line.INSURANCE_NINE_HIGH: LineDefinition(
        "Pai gow, nine high",
        f"{INSURANCE_PAI_GOW}, topped by a nine (2-3-4-5-7-8-9 or 2-3-4-6-7-8-9)",
        (INSURANCE,),
    ),
}


def lines_in(mask: int) -> frozenset[Line]:
    """The lines whose bits are set in a qualifying mask."""
    return frozenset(line for line, bit in BIT.items() if mask & bit)


def mask_of(lines: frozenset[Line] | set[Line] | tuple[Line, ...]) -> int:
    """The qualifying mask of a set of lines."""
    mask = 0
    for line in lines:
        mask |= BIT[line]
    return mask
