"""The rules engine driven with card codes, for the tests that hold it to the oracle.

tests/support/rules/oracle.py is the independent brute-force reading of the rules; these are the
engine's side of each comparison (lines, Face Up outcomes, five-card values), the order of two
values, and the hypothesis strategies both test files draw from
(tests/rules/test_oracle_agreement.py, tests/rules/test_oracle_rankings.py).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol, Self, TypeVar

from hypothesis import strategies as st

from controller.rules.cards import JokerMode, SevenCardHand, parse_cards
from controller.rules.lines import lines_in
from controller.rules.qualify import ace_high_outcomes, qualifier
from controller.rules.ranking import AceFive, evaluate_five
from support.rules import oracle
from support.rules.hands import JOKER, any_seven, rich_hands

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from controller.rules.qualify import Qualifier
    from controller.rules.ranking import HandValue

MODES = oracle.MODES


@functools.cache
def _classifier(mode: str) -> Qualifier:
    return qualifier(JokerMode(mode))


def engine_mask(codes: Iterable[str], mode: str) -> int:
    return _classifier(mode)(SevenCardHand.parse(list(codes)).indices)


def engine_lines(codes: Iterable[str], mode: str) -> frozenset[str]:
    return frozenset(line.value for line in lines_in(engine_mask(codes, mode)))


def engine_outcomes(dealer: Sequence[str], player: Sequence[str], mode: str) -> frozenset[str]:
    mask = ace_high_outcomes(engine_mask(dealer, mode), engine_mask(player, mode))
    return frozenset(line.value for line in lines_in(mask))


def engine_five(codes: Iterable[str], mode: str, ace_five: str) -> HandValue:
    cards = parse_cards(list(codes))
    return evaluate_five(cards, JokerMode(mode), AceFive(ace_five)).value


def slug(value: HandValue) -> str:
    return value.category.name.lower().replace("_", "-")


class _Ordered(Protocol):
    """A value ordered against its own kind: a hand value, a rank tuple."""

    def __lt__(self, other: Self, /) -> bool: ...
    def __gt__(self, other: Self, /) -> bool: ...


_O = TypeVar("_O", bound=_Ordered)


def sign(a: _O, b: _O) -> int:
    return (a > b) - (a < b)


def describe(codes: Iterable[str], mode: str, expected: frozenset[str], got: frozenset[str]) -> str:
    missing = sorted(expected - got)
    extra = sorted(got - expected)
    return f"{' '.join(codes)} [{mode}]: engine lacks {missing}, engine adds {extra}"


def assert_lines_agree(codes: Sequence[str], mode: str) -> None:
    expected = oracle.qualifying_lines(codes, mode)
    got = engine_lines(codes, mode)
    assert got == expected, describe(codes, mode, expected, got)


def deck(ranks: str, suits: str, *extra: str) -> tuple[str, ...]:
    """A reduced deck: every rank of ``ranks`` in every suit of ``suits``, ``extra``, the joker."""
    return (*(r + s for r in ranks for s in suits), *extra, JOKER)


sevens = st.one_of(any_seven, rich_hands())
modes = st.sampled_from(MODES)
ace_fives = st.sampled_from(oracle.ACE_FIVE_OPTIONS)
