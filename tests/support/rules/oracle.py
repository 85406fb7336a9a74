"""An independent brute-force oracle for the Pai Gow Poker rules engine, used only by the tests.

The oracle shares no code with :mod:`controller`: it takes card codes (``"As"``, ``"Td"``,
``"Jk"``) and returns line and category slugs and plain comparable tuples. It is written from
the rules as docs/rules.md reads them, 58 Pa. Code § 645a.6 and N.J.A.C. 13:69F-11, and it
trades speed for being obviously right.

How it works
============

*Substitution.* Every question about a hand holding the joker is answered by replacing the
joker with each card it is allowed to be, evaluating the resulting joker-free ("concrete")
hand with plain poker rules, and combining the answers:

- *Qualifying lines* (:func:`qualifying_lines`) are existential: a line holds when it holds
  for at least one allowed substitution, and each line chooses its own.

  - Straight, flush and straight-flush lines (royal, seven-card straight flush, royal match,
    ...): the joker becomes, in turn, each of the 52 natural cards not already in the hand.
    That is the rule in both modes ("any card not already in the hand that completes a
    straight, flush, straight flush or royal flush"; a substitution that completes nothing
    cannot make one of these lines hold). The substituted card is marked *wild*, so
    "natural" lines and "with joker" lines can tell whether it was used.
  - Rank-count lines (pair ... four of a kind, five aces, five of a kind): the joker becomes
    an unsuited card of one rank, which may duplicate a card of the hand. Semi-wild: only the
    ace. Fully wild: each of the 13 ranks in turn.
  - Ace high is read off the other lines: no pair, no straight and no flush (each with the
    joker's help), and the top card an ace (a natural ace without the joker, or the joker as
    the ace without a natural ace).
  - The NJ insurance wager's pai gow lines (:func:`insurance_lines`) give the joker one
    substitution in either mode, an unsuited ace (N.J.A.C. 13:69F-11.2(h)).

- *Five-card values* (:func:`five_card_value`): the joker becomes every allowed card and the
  best concrete value is kept. Semi-wild: an unsuited ace, or any card not already in the five
  whose concrete hand is a straight, flush, straight flush or royal flush. Fully wild: any
  card not already in the five, or an unsuited card of any rank (so five of a kind exists).
- *Seven-card values* (:func:`best_five_category`, :func:`compare_seven`): the best of the 21
  five-card values. Whether "not already in the hand" means the five or the seven cards makes
  no difference here: a joker standing for one of the two unused cards gives the same concrete
  five cards as that natural card does.

*Concrete values* are ``(category index, key)`` tuples compared lexicographically. Categories
run ``high-card`` (0) up to ``five-of-a-kind`` (10). The key is the highest-unmatched-card
rule: the ranks of the groups, biggest group first and higher rank first, which is also card by
card from the top for flushes and high cards. Straights and straight flushes are keyed by their
position in an explicit list of the ten straights, ordered as § 645a.6(b)(3),(7) (A-2-3-4-5
second highest) or as N.J.A.C. 13:69F-11(d) (A-2-3-4-5 lowest); the A-high straight flush is
the ``royal-flush`` category of its own.

*Speed.* Straight-type lines use rank bitmasks (bit ``r`` for rank ``r``, and bit 1 again for
the ace as low card) and skip suits with fewer than five cards; five-card values and the
mode-independent part of the lines are memoised.

The parts
=========

The oracle is this module's names, defined beside it: tests/support/rules/oracle_cards.py (cards,
modes, parsing), oracle_slugs.py (the line slugs), oracle_values.py (five-card, seven-card and
two-card values), oracle_lines.py (seven-card and natural lines) and oracle_paytables.py (the
line paid, the Dynasty hands). The tests import them from here, as ``support.rules.oracle``.
"""

from __future__ import annotations

from support.rules.oracle_cards import (
    ACE,
    ACE_FIVE_OPTIONS,
    ALL_CODES,
    FULLY_WILD,
    JOKER,
    KING,
    LOWEST,
    MODES,
    NATURAL_CARDS,
    NATURAL_CODES,
    NO_SUIT,
    QUEEN,
    RANK_SYMBOLS,
    RANKS,
    SECOND_HIGHEST,
    SEMI_WILD,
    SUIT_SYMBOLS,
    TEN,
    ConcreteCard,
    NaturalCard,
    code_of,
    parse_code,
    split_codes,
)
from support.rules.oracle_lines import (
    NATURAL_ROYAL_MATCHES,
    ROYAL_BITS,
    ROYAL_MATCHES,
    WHEEL_BITS,
    WHEEL_RANKS,
    WINDOWS5,
    WINDOWS7,
    ace_high_outcome,
    insurance_lines,
    natural_lines,
    qualifying_lines,
    rank_lines,
    split_lines,
    suited_lines,
)
from support.rules.oracle_paytables import DYNASTY_HANDS, odds_of, paid_line
from support.rules.oracle_slugs import (
    ACE_HIGH_NO_JOKER,
    ACE_HIGH_WITH_JOKER,
    BOTH_ACE_HIGH,
    DEALER_ONLY_ACE_HIGH_NO_JOKER,
    DEALER_ONLY_ACE_HIGH_WITH_JOKER,
    FIVE_ACES,
    FIVE_OF_A_KIND,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    INSURANCE_ACE_HIGH,
    INSURANCE_ACE_HIGH_NO_JOKER,
    INSURANCE_ACE_HIGH_WITH_JOKER,
    INSURANCE_BY_TOP,
    INSURANCE_LINES,
    NATURAL_ROYAL_FLUSH,
    NATURAL_ROYAL_PLUS_ACE_KING,
    NATURAL_ROYAL_PLUS_ACE_QUEEN,
    NATURAL_WHEEL,
    NATURAL_WHEEL_PLUS_ACE_QUEEN,
    OUTCOME_LINES,
    PAIR,
    PER_HAND_LINES,
    ROYAL_FLUSH,
    ROYAL_PLUS_ACE_KING,
    ROYAL_PLUS_ACE_QUEEN,
    ROYAL_PLUS_KING_QUEEN,
    SF7,
    SF7_NATURAL,
    SF7_WITH_JOKER,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_FLUSH_WITH_JOKER,
    STRAIGHT_FLUSH_WITHOUT_JOKER,
    THREE_OF_A_KIND,
    THREE_PAIR,
    TWO_PAIR,
)
from support.rules.oracle_values import (
    CATEGORIES,
    FIVE_KIND_CAT,
    FLUSH_CAT,
    FULL_HOUSE_CAT,
    HIGH_CARD_CAT,
    PAIR_CAT,
    QUADS_CAT,
    ROYAL_CAT,
    STRAIGHT_CAT,
    STRAIGHT_FLUSH_CAT,
    STRAIGHT_ORDER,
    TRIPS_CAT,
    TWO_PAIR_CAT,
    WHEEL_TOP,
    Value,
    best_five_category,
    best_five_value,
    compare_five,
    compare_seven,
    compare_two,
    concrete_value,
    five_card_value,
    joker_substitutions,
    two_card_value,
)

__all__ = [
    "ACE",
    "ACE_FIVE_OPTIONS",
    "ACE_HIGH_NO_JOKER",
    "ACE_HIGH_WITH_JOKER",
    "ALL_CODES",
    "BOTH_ACE_HIGH",
    "CATEGORIES",
    "DEALER_ONLY_ACE_HIGH_NO_JOKER",
    "DEALER_ONLY_ACE_HIGH_WITH_JOKER",
    "DYNASTY_HANDS",
    "FIVE_ACES",
    "FIVE_KIND_CAT",
    "FIVE_OF_A_KIND",
    "FLUSH",
    "FLUSH_CAT",
    "FOUR_OF_A_KIND",
    "FULLY_WILD",
    "FULL_HOUSE",
    "FULL_HOUSE_CAT",
    "HIGH_CARD_CAT",
    "INSURANCE_ACE_HIGH",
    "INSURANCE_ACE_HIGH_NO_JOKER",
    "INSURANCE_ACE_HIGH_WITH_JOKER",
    "INSURANCE_BY_TOP",
    "INSURANCE_LINES",
    "JOKER",
    "KING",
    "LOWEST",
    "MODES",
    "NATURAL_CARDS",
    "NATURAL_CODES",
    "NATURAL_ROYAL_FLUSH",
    "NATURAL_ROYAL_MATCHES",
    "NATURAL_ROYAL_PLUS_ACE_KING",
    "NATURAL_ROYAL_PLUS_ACE_QUEEN",
    "NATURAL_WHEEL",
    "NATURAL_WHEEL_PLUS_ACE_QUEEN",
    "NO_SUIT",
    "OUTCOME_LINES",
    "PAIR",
    "PAIR_CAT",
    "PER_HAND_LINES",
    "QUADS_CAT",
    "QUEEN",
    "RANKS",
    "RANK_SYMBOLS",
    "ROYAL_BITS",
    "ROYAL_CAT",
    "ROYAL_FLUSH",
    "ROYAL_MATCHES",
    "ROYAL_PLUS_ACE_KING",
    "ROYAL_PLUS_ACE_QUEEN",
    "ROYAL_PLUS_KING_QUEEN",
    "SECOND_HIGHEST",
    "SEMI_WILD",
    "SF7",
    "SF7_NATURAL",
    "SF7_WITH_JOKER",
    "STRAIGHT",
    "STRAIGHT_CAT",
    "STRAIGHT_FLUSH",
    "STRAIGHT_FLUSH_CAT",
    "STRAIGHT_FLUSH_WITHOUT_JOKER",
    "STRAIGHT_FLUSH_WITH_JOKER",
    "STRAIGHT_ORDER",
    "SUIT_SYMBOLS",
    "TEN",
    "THREE_OF_A_KIND",
    "THREE_PAIR",
    "TRIPS_CAT",
    "TWO_PAIR",
    "TWO_PAIR_CAT",
    "WHEEL_BITS",
    "WHEEL_RANKS",
    "WHEEL_TOP",
    "WINDOWS5",
    "WINDOWS7",
    "ConcreteCard",
    "NaturalCard",
    "Value",
    "ace_high_outcome",
    "best_five_category",
    "best_five_value",
    "code_of",
    "compare_five",
    "compare_seven",
    "compare_two",
    "concrete_value",
    "five_card_value",
    "insurance_lines",
    "joker_substitutions",
    "natural_lines",
    "odds_of",
    "paid_line",
    "parse_code",
    "qualifying_lines",
    "rank_lines",
    "split_codes",
    "split_lines",
    "suited_lines",
    "two_card_value",
]
