"""The oracle's paytables: the line a hand is paid on, and the Dynasty Bonus hands of each reading.

Part of the independent brute-force oracle (tests/support/rules/oracle.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from support.rules.oracle_slugs import (
    NATURAL_ROYAL_PLUS_ACE_KING,
    NATURAL_ROYAL_PLUS_ACE_QUEEN,
    NATURAL_WHEEL,
    NATURAL_WHEEL_PLUS_ACE_QUEEN,
    ROYAL_PLUS_ACE_QUEEN,
    SF7_NATURAL,
    SF7_WITH_JOKER,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


# ---------------------------------------------------------------------------------------------
# Paytables: the line a hand is paid on, and the Dynasty Bonus hands of each reading

DYNASTY_HANDS: Final[dict[str, tuple[str, ...]]] = {
    # 58 Pa. Code § 645a.6(g)(1)-(5); (g)(3) by its text, "an additional ace and queen of the
    # same suit without a joker", the royal itself "without a joker".
    "pa": (
        NATURAL_WHEEL_PLUS_ACE_QUEEN,
        SF7_NATURAL,
        NATURAL_ROYAL_PLUS_ACE_QUEEN,
        SF7_WITH_JOKER,
        NATURAL_WHEEL,
    ),
    # § 645a.6(g)(3) by its caption, "a natural royal flush and a natural ace/king suited".
    "pa-caption": (
        NATURAL_WHEEL_PLUS_ACE_QUEEN,
        SF7_NATURAL,
        NATURAL_ROYAL_PLUS_ACE_KING,
        SF7_WITH_JOKER,
        NATURAL_WHEEL,
    ),
    # N.J.A.C. 13:69F-11(i)1-4: (i)3's royal is "with or without a joker"; no (g)(5).
    "nj": (NATURAL_WHEEL_PLUS_ACE_QUEEN, SF7_NATURAL, ROYAL_PLUS_ACE_QUEEN, SF7_WITH_JOKER),
}
"""Each Dynasty reading's seven-card hands, highest first, as the texts list them."""


def odds_of(pays: str) -> int:
    """N of an odds pay written ``N to 1`` (thousands separated or not); 0 for ``Push``."""
    if pays == "Push":
        return 0
    number, to_one = pays.split(" to ")
    if to_one != "1":
        raise ValueError(f"not an odds pay: {pays!r}")
    return int(number.replace(",", ""))


def paid_line(lines: Iterable[str], rows: Sequence[tuple[str, str]]) -> str | None:
    """The line of the highest-paying odds row (slug, pays) a hand has; ties: the first listed.

    docs/rules.md § 4.2: "each hand is paid on exactly one line, the highest-paying line of that
    paytable that the hand qualifies for".
    """
    held = set(lines)
    best: tuple[int, str] | None = None
    for slug, pays in rows:
        if slug in held and (best is None or odds_of(pays) > best[0]):
            best = (odds_of(pays), slug)
    return None if best is None else best[1]
