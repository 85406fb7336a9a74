"""controller/rules/hand_masks.py is the census's: every mask a seven-card hand has, per mode.

The § 688a.12(e) floor (controller/ledger/payout_floor.py) takes the most one player wins over
these masks; a mask missing would let a cap below what a hand pays pass, one too many would
refuse a legal cap. So the table is compared with the exact analyzer's count over all
C(53, 7) hands of the full deck. On a mismatch the test prints the table as it should read.
"""

from __future__ import annotations

import pytest

from controller.analyzer.census import mask_census
from controller.analyzer.deck import Deck
from controller.rules.cards import JokerMode
from controller.rules.hand_masks import hand_masks


@pytest.mark.slow
@pytest.mark.exhaustive
@pytest.mark.parametrize("mode", list(JokerMode))
def test_688a12_e_the_masks_are_every_mask_a_seven_card_hand_has(mode: JokerMode) -> None:
    counted = frozenset(mask_census(Deck(), mode))
    table = "\n".join(f"    0x{mask:010X}," for mask in sorted(counted))
    assert hand_masks(mode) == counted, f"{mode.name}:\n{table}"
