"""The oracle's line slugs: the paytable names of the lines a hand qualifies for.

Part of the independent brute-force oracle (tests/support/rules/oracle.py): the same slugs as
controller/rules/lines.py, written again from the paytables, not imported.
"""

from __future__ import annotations

from typing import Final

from support.rules.oracle_cards import KING, QUEEN, TEN

# ---------------------------------------------------------------------------------------------
# Line slugs (the paytable names, as in controller/rules/lines.py)

SF7_NATURAL: Final = "seven-card-straight-flush-natural"
SF7_WITH_JOKER: Final = "seven-card-straight-flush-with-joker"
SF7: Final = "seven-card-straight-flush"
ROYAL_PLUS_KING_QUEEN: Final = "royal-flush-plus-natural-suited-king-queen"
ROYAL_PLUS_ACE_KING: Final = "royal-flush-plus-natural-suited-ace-king"
ROYAL_PLUS_ACE_QUEEN: Final = "royal-flush-plus-natural-suited-ace-queen"
NATURAL_ROYAL_PLUS_ACE_QUEEN: Final = "natural-royal-flush-plus-natural-suited-ace-queen"
NATURAL_ROYAL_PLUS_ACE_KING: Final = "natural-royal-flush-plus-natural-suited-ace-king"
NATURAL_WHEEL_PLUS_ACE_QUEEN: Final = (
    "natural-ace-five-straight-flush-plus-natural-suited-ace-queen"
)
NATURAL_WHEEL: Final = "natural-ace-five-straight-flush"
FIVE_ACES: Final = "five-aces"
FIVE_OF_A_KIND: Final = "five-of-a-kind"
ROYAL_FLUSH: Final = "royal-flush"
NATURAL_ROYAL_FLUSH: Final = "natural-royal-flush"
STRAIGHT_FLUSH: Final = "straight-flush"
STRAIGHT_FLUSH_WITHOUT_JOKER: Final = "straight-flush-without-joker"
STRAIGHT_FLUSH_WITH_JOKER: Final = "straight-flush-with-joker"
FOUR_OF_A_KIND: Final = "four-of-a-kind"
FULL_HOUSE: Final = "full-house"
FLUSH: Final = "flush"
STRAIGHT: Final = "straight"
THREE_OF_A_KIND: Final = "three-of-a-kind"
THREE_PAIR: Final = "three-pair"
TWO_PAIR: Final = "two-pair"
PAIR: Final = "pair"
ACE_HIGH_WITH_JOKER: Final = "ace-high-with-joker"
ACE_HIGH_NO_JOKER: Final = "ace-high-no-joker"
BOTH_ACE_HIGH: Final = "dealer-and-player-ace-high"
DEALER_ONLY_ACE_HIGH_WITH_JOKER: Final = "dealer-only-ace-high-with-joker"
DEALER_ONLY_ACE_HIGH_NO_JOKER: Final = "dealer-only-ace-high-no-joker"
INSURANCE_ACE_HIGH: Final = "insurance-ace-high"
INSURANCE_ACE_HIGH_WITH_JOKER: Final = "insurance-ace-high-with-joker"
INSURANCE_ACE_HIGH_NO_JOKER: Final = "insurance-ace-high-no-joker"
INSURANCE_BY_TOP: Final = {
    9: "insurance-nine-high",
    TEN: "insurance-ten-high",
    11: "insurance-jack-high",
    QUEEN: "insurance-queen-high",
    KING: "insurance-king-high",
}
INSURANCE_LINES: Final = frozenset(
    {
        INSURANCE_ACE_HIGH,
        INSURANCE_ACE_HIGH_WITH_JOKER,
        INSURANCE_ACE_HIGH_NO_JOKER,
        *INSURANCE_BY_TOP.values(),
    }
)

PER_HAND_LINES: Final = frozenset(
    {
        SF7_NATURAL,
        SF7_WITH_JOKER,
        SF7,
        ROYAL_PLUS_KING_QUEEN,
        ROYAL_PLUS_ACE_KING,
        ROYAL_PLUS_ACE_QUEEN,
        NATURAL_ROYAL_PLUS_ACE_QUEEN,
        NATURAL_ROYAL_PLUS_ACE_KING,
        NATURAL_WHEEL_PLUS_ACE_QUEEN,
        NATURAL_WHEEL,
        FIVE_ACES,
        FIVE_OF_A_KIND,
        ROYAL_FLUSH,
        NATURAL_ROYAL_FLUSH,
        STRAIGHT_FLUSH,
        STRAIGHT_FLUSH_WITHOUT_JOKER,
        STRAIGHT_FLUSH_WITH_JOKER,
        FOUR_OF_A_KIND,
        FULL_HOUSE,
        FLUSH,
        STRAIGHT,
        THREE_OF_A_KIND,
        THREE_PAIR,
        TWO_PAIR,
        PAIR,
        ACE_HIGH_WITH_JOKER,
        ACE_HIGH_NO_JOKER,
        *INSURANCE_LINES,
    }
)
OUTCOME_LINES: Final = frozenset(
    {BOTH_ACE_HIGH, DEALER_ONLY_ACE_HIGH_WITH_JOKER, DEALER_ONLY_ACE_HIGH_NO_JOKER}
)
