"""``jackpotd hand`` takes the cards as the meter display draws them: ``A♠ 10♥ Joker``.

docs/operations.md, "6. Verify a jackpot": a supervisor reads a pay's hand off the display
(controller/web/pays.py draws a rank and a suit symbol) and types it into ``jackpotd hand``,
which used to refuse ``A♠``. The command line now reads the suit symbols (and the white ones
``♤♡♢♧``, and ``Joker``) as well as the codes; the device wire still takes canonical codes only
(docs/mqtt.md), so a device cannot send a hand two spellings of which name the same cards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.rules.cards import CardError, parse_cards
from controller.web.pays import cards

ROOT = Path(__file__).resolve().parents[2]
HAND = "As Ks Qs Js Jk Kh Qh"


def hand(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", "hand", *argv],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def drawn(codes: str) -> str:
    """The hand as the display draws it: rank then suit symbol, ``Joker`` for the joker."""
    return " ".join(f"{card['rank']}{card['suit']}" for card in cards(codes))


@pytest.mark.parametrize(
    ("typed", "codes"),
    [
        ("A♠ K♠ Q♠ J♠ Joker K♥ Q♥", HAND),  # as the display draws HAND (tested below)
        ("A♣ 10♦ 9♥ 2♠ Joker 5♣ 3♦", "Ac Td 9h 2s Jk 5c 3d"),
        ("a♤ k♤ q♤ j♤ joker k♡ q♡", HAND),
        ("A♠️ K♠️ Q♠️ J♠️ Jk K♥️ Q♥️", HAND),  # an emoji keyboard's suits (U+FE0F after each)
    ],
)
def test_the_hand_command_reads_the_displays_notation(typed: str, codes: str) -> None:
    as_codes = hand(codes, "--paytable", "fortune-1", "--json")
    as_typed = hand(typed, "--paytable", "fortune-1", "--json")
    assert as_codes.returncode == 0, as_codes.stderr
    assert as_typed.returncode == 0, as_typed.stderr
    assert json.loads(as_typed.stdout) == json.loads(as_codes.stdout)


def test_the_display_draws_symbols_the_command_reads() -> None:
    assert drawn(HAND) == "A♠ K♠ Q♠ J♠ Joker K♥ Q♥"
    assert drawn("Ac Td 9h 2s Jk 5c 3d") == "A♣ 10♦ 9♥ 2♠ Joker 5♣ 3♦"


def test_a_symbol_that_is_no_suit_is_refused_in_one_line() -> None:
    done = hand("A★ K♠ Q♠ J♠ Joker K♥ Q♥", "--paytable", "fortune-1")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "jackpotd: 'A★' is not a card: expected a rank (A K Q J T/10 9 .. 2) and a suit "
        "(s h d c or ♠ ♥ ♦ ♣), or Jk for the joker"
    )


def test_the_device_wire_takes_canonical_codes_only() -> None:
    with pytest.raises(CardError, match="is not a card code"):
        parse_cards(drawn(HAND))
