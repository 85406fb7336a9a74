"""The regulation clauses the controller meets, as its tests name them (docs/rules.md).

A test that proves a clause is named after it: ``test_688a12_e_...`` proves 58 Pa. Code
§ 688a.12(e), ``test_13_69f_11_2_h_...`` N.J.A.C. 13:69F-11.2(h). Each clause below is the
key its tests' names begin with (the part after ``test_``), its citation and what it asks.
A test's clause is the longest key its name begins with, followed by ``_`` or the end; a test
whose name begins with a code's stem (``645a``, ``688a``, ``13_69``, ``3772``, ``5320``,
``5321``) but with no key is an error of the evidence pack, and so is a clause no test names:
the pack lists every clause that tests name, and none without a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from controller.errors import InputError


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause: the key its tests' names begin with, its citation, and what it asks."""

    key: str
    citation: str
    asks: str


PA = "58 Pa. Code"
NJ = "N.J.A.C."

CLAUSES: Final = (
    Clause("645a6", f"{PA} § 645a.6", "Pai Gow Poker rankings"),
    Clause("645a6_a", f"{PA} § 645a.6(a)", "the ranks; the ace in A-2-3-4-5 only; the joker"),
    Clause("645a6_b", f"{PA} § 645a.6(b)", "the permissible hands, highest to lowest"),
    Clause("645a6_b1", f"{PA} § 645a.6(b)(1)", "five aces"),
    Clause("645a6_b2", f"{PA} § 645a.6(b)(2)", "a royal flush, with or without the joker"),
    Clause("645a6_b3", f"{PA} § 645a.6(b)(3)", "a straight flush; A-2-3-4-5 the highest"),
    Clause("645a6_b4", f"{PA} § 645a.6(b)(4)", "four of a kind"),
    Clause("645a6_b5", f"{PA} § 645a.6(b)(5)", "a full house"),
    Clause("645a6_b6", f"{PA} § 645a.6(b)(6)", "a flush, and how two flushes compare"),
    Clause("645a6_b7", f"{PA} § 645a.6(b)(7)", "a straight, and the straights' order"),
    Clause("645a6_b8", f"{PA} § 645a.6(b)(8)", "three of a kind"),
    Clause("645a6_b9", f"{PA} § 645a.6(b)(9)", "two pair"),
    Clause("645a6_b10", f"{PA} § 645a.6(b)(10)", "a pair, high or low hand"),
    Clause("645a6_c", f"{PA} § 645a.6(c)", "hands of identical rank: highest card; ties"),
    Clause("645a6_d", f"{PA} § 645a.6(d)", "the Fortune Bonus hands above five aces"),
    Clause("645a6_d1", f"{PA} § 645a.6(d)(1)", "a seven-card straight flush with no joker"),
    Clause("645a6_d2", f"{PA} § 645a.6(d)(2)", "a royal flush plus Royal Match"),
    Clause("645a6_d2i", f"{PA} § 645a.6(d)(2)(i)", "the Emperor's Challenge royal match"),
    Clause("645a6_d3", f"{PA} § 645a.6(d)(3)", "a seven-card straight flush with joker"),
    Clause("645a6_e2", f"{PA} § 645a.6(e)(2)", "Emperor's Treasure: royal plus ace-king suited"),
    Clause("645a6_f1", f"{PA} § 645a.6(f)(1)", "Progressive: a seven-card straight flush"),
    Clause("645a6_f2", f"{PA} § 645a.6(f)(2)", "Progressive: five aces"),
    Clause("645a6_f3", f"{PA} § 645a.6(f)(3)", "Progressive: a royal flush"),
    Clause("645a6_g", f"{PA} § 645a.6(g)", "the Dynasty Bonus hands"),
    Clause("645a6_g1", f"{PA} § 645a.6(g)(1)", "an ace/five natural straight flush, A/Q suited"),
    Clause("645a6_g3", f"{PA} § 645a.6(g)(3)", "a natural royal and a natural ace/king suited"),
    Clause("645a6_g5", f"{PA} § 645a.6(g)(5)", "an ace/five natural straight flush"),
    Clause("688a1", f"{PA} § 688a.1", "Qualifying Wager; the Envy Bonus, another player's hand"),
    Clause("688a12", f"{PA} § 688a.12", "the payout odds and paytables"),
    Clause("688a12_b", f"{PA} § 688a.12(b)", "the Ace High paytables 1-5"),
    Clause("688a12_c", f"{PA} § 688a.12(c)", "the Fortune Bonus + Envy paytables 1-6"),
    Clause("688a12_d", f"{PA} § 688a.12(d)", "the Progressive Payout + Envy paytables 1-7"),
    Clause("688a12_e", f"{PA} § 688a.12(e)", "the maximum payout and its floor"),
    Clause("13_69e_1_39a_b", f"{NJ} 13:69E-1.39A(b)", "the progressive controller's meters"),
    Clause("13_69e_1_39c", f"{NJ} 13:69E-1.39C", "linked progressives: messages and their chain"),
    Clause("13_69f_11_2_h", f"{NJ} 13:69F-11.2(h)", "the insurance wager and its joker"),
    Clause("13_69f_11_b2", f"{NJ} 13:69F-11(b)(2)", "a natural royal flush"),
    Clause("13_69f_11_d", f"{NJ} 13:69F-11(d)", "the optional low A-2-3-4-5"),
    Clause("13_69f_11_g", f"{NJ} 13:69F-11(g)", "pay table B: straight flush with, without joker"),
    Clause("13_69f_11_i", f"{NJ} 13:69F-11(i)", "the EZ Pai Gow Dynasty Bonus hands"),
    Clause("13_69f_11_i3", f"{NJ} 13:69F-11(i)(3)", "a royal with or without joker, natural A/Q"),
    Clause("3772_10_08_a", "Ohio Adm. Code 3772-10-08(A)", "actual against theoretical, 4 %"),
    Clause("5320_8", "9 NYCRR 5320.8", "the last hits and meters"),
    Clause("5321_18c", "9 NYCRR 5321.18(c)", "a table not heard from is closed"),
    Clause("r432_1838_4", "Mich. Admin. Code R 432.1838(4)", "no jackpot reduced or moved unless"),
    Clause("68_iac_2_6_33", "68 IAC 2-6-33", "a jackpot in play moves on a malfunction"),
    Clause("68_20_1", "Arrêté du 14 mai 2007, art. 68-20-1", "a pool kept three months"),
    Clause("68_20_2", "Arrêté du 14 mai 2007, art. 68-20-2", "a stopped pool's increment"),
)
STEMS: Final = re.compile(r"^(645a|688a|13_69|3772|5320|5321)")
"""How a test's name that means to name a clause begins."""


class ClauseNameError(InputError, ValueError):
    """A test's name begins like a clause's but names none the pack knows."""


def clause_of(test_name: str) -> Clause | None:
    """The clause a test (``test_...``) is named after, or None for a test named otherwise."""
    name = test_name.removeprefix("test_")
    found = [
        clause for clause in CLAUSES if name == clause.key or name.startswith(clause.key + "_")
    ]
    if found:
        return max(found, key=lambda clause: len(clause.key))
    if STEMS.match(name):
        raise ClauseNameError(f"{test_name}: names a clause the evidence pack does not know")
    return None
