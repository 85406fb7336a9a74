"""Multi-level progressive paytables: each level's terms, the row's level, the choice at meters.

A pool of several levels gives each its own meter (docs/paytables.md, "Levels"); a row pays
from the level it names, so which row a hand is paid on depends on the meter of each row's
level. A one-level paytable is the case of one unnamed level and reads as it always has.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import pytest
from support.config_files import edited, error_of, write

from controller.rules.lines import Line
from controller.rules.paytable import MAIN_LEVEL, FixedPay, LevelTerms
from controller.rules.paytable_files import PaytableError, parse_paytable, seed_paytables

if TYPE_CHECKING:
    from pathlib import Path

HEAD = """
name = "house-levels"
title = "House levels"
wager = "progressive"
source = "house rules"
joker = "semi-wild"

[progressive]
wager = "$5"
original_wager_returned = false
"""

LEVELS = """
[[progressive.levels]]
level = "grand"
meter_seed = "$10,000"
rate_of_progression = "1%"
must_hit_by = "$20,000"
past_trigger = "next-level"

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "3%"
reserve_rate = "0.5%"
limit = "$50,000"

[[progressive.levels]]
level = "minor"
meter_seed = "$250"
rate_of_progression = "2%"

[[progressive.levels]]
level = "mini"
meter_seed = "$50"
rate_of_progression = "1%"
"""


def row(line: str, pays: str, level: str | None = None) -> str:
    """One ``[[lines]]`` entry, paying from ``level`` when one is given."""
    named = f'level = "{level}"\n' if level is not None else ""
    return f'\n[[lines]]\nline = "{line}"\noutcome = "A hand"\npays = "{pays}"\n{named}'


ROWS = (
    row("seven-card-straight-flush", "100% of meter", "major")
    + row("five-aces", "100% of meter", "minor")
    + row("royal-flush", "100% of meter", "mini")
    + row("straight-flush", "$100")
)


def four_levels() -> str:
    """A four-level paytable whose top level is a must-hit-by level."""
    return HEAD + LEVELS + ROWS


def test_each_level_has_its_own_seed_rates_limit_and_kind() -> None:
    terms = parse_paytable(four_levels(), "levels.toml").progressive
    assert terms is not None
    assert [level.level for level in terms.levels] == ["grand", "major", "minor", "mini"]
    grand, major = terms.levels[0], terms.levels[1]
    assert grand == LevelTerms(
        "grand",
        1_000_000,
        Fraction(1, 100),
        must_hit_by_cents=2_000_000,
        spill_to_next=True,
    )
    assert grand.mystery
    assert not major.mystery
    assert major.reserve_rate == Fraction(1, 200)
    assert major.limit_cents == 5_000_000
    # One wager feeds every level: the pool's rates are the levels' sums.
    assert terms.rate_of_progression == Fraction(7, 100)
    assert terms.reserve_rate == Fraction(1, 200)
    assert terms.meter_seed_cents == 1_000_000  # the first level's
    assert terms.seed_of("minor") == 25_000


def test_a_row_pays_from_the_level_it_names_and_a_fixed_pay_from_none() -> None:
    paytable = parse_paytable(four_levels(), "levels.toml")
    by_line = {row.line: row for row in paytable.lines}
    assert by_line[Line.SEVEN_CARD_STRAIGHT_FLUSH].level == "major"
    assert by_line[Line.FIVE_ACES].level == "minor"
    assert by_line[Line.STRAIGHT_FLUSH].level == MAIN_LEVEL
    assert by_line[Line.STRAIGHT_FLUSH].pays == FixedPay(10_000)


def test_the_row_chosen_depends_on_the_meter_of_each_rows_level() -> None:
    """Five aces qualifies for the five-aces row (minor) and the royal flush row (mini)."""
    paytable = parse_paytable(four_levels(), "levels.toml")
    rows = tuple(row for row in paytable.lines if row.line in {Line.FIVE_ACES, Line.ROYAL_FLUSH})
    at_seeds = paytable.best_of(rows)
    assert at_seeds is not None
    assert at_seeds.line is Line.FIVE_ACES
    mini_high = paytable.best_of(rows, {"minor": 30_000, "mini": 30_001})
    assert mini_high is not None
    assert mini_high.line is Line.ROYAL_FLUSH
    level_left_out = paytable.best_of(rows, {"mini": 20_000})  # minor at its seed, $250
    assert level_left_out is not None
    assert level_left_out.line is Line.FIVE_ACES


def test_a_one_level_paytable_is_one_unnamed_level_as_before() -> None:
    for paytable in seed_paytables().values():
        assert paytable.levels == ()
        assert all(line.level == MAIN_LEVEL for line in paytable.lines)
        if paytable.progressive is not None:
            assert paytable.seed_of(MAIN_LEVEL) == paytable.progressive.meter_seed_cents
            for mask in range(64):  # a meter alone and the same meter named by level agree
                meter = paytable.seed_cents * 3
                by_level = paytable.line_for(mask, {MAIN_LEVEL: meter})
                assert paytable.line_for(mask, meter) == by_level


@pytest.mark.parametrize(
    ("document", "key", "reason"),
    [
        (
            HEAD + LEVELS.replace('level = "minor"', 'level = "major"') + ROWS,
            "progressive.levels[2].level",
            "level 'major' is listed twice",
        ),
        (
            HEAD.replace("original_wager_returned", 'meter_seed = "$5"\noriginal_wager_returned')
            + LEVELS
            + ROWS,
            "progressive.meter_seed",
            "each level states its own; drop it here",
        ),
        (
            HEAD
            + LEVELS.replace('rate_of_progression = "3%"', 'rate_of_progression = "98%"')
            + ROWS,
            "progressive.levels",
            "exceeds 100% of the wager",
        ),
        (
            HEAD + LEVELS.replace('must_hit_by = "$20,000"', 'must_hit_by = "$10,000"') + ROWS,
            "progressive.levels[0].must_hit_by",
            "a mystery level must hit by more than its seed",
        ),
        (
            HEAD + LEVELS.replace('limit = "$50,000"', 'limit = "$500"') + ROWS,
            "progressive.levels[1].limit",
            "the limit cannot be below the seed",
        ),
        (
            HEAD
            + LEVELS.replace('past_trigger = "next-level"\n', "")
            + '\npast_trigger = "next-level"\n'
            + ROWS,
            "progressive.levels[3].past_trigger",
            "only a mystery level has a trigger",
        ),
        (
            HEAD + LEVELS + row("seven-card-straight-flush", "100% of meter"),
            "lines[0].level",
            "name the level it pays from; one of grand, major, minor, mini",
        ),
        (
            HEAD + LEVELS + row("seven-card-straight-flush", "100% of meter", "grand"),
            "lines[0].level",
            "grand is a mystery level: it hits at its trigger, no hand",
        ),
        (
            HEAD + LEVELS + row("straight-flush", "$100", "mini"),
            "lines[0].level",
            "a fixed pay is the house's, from no level",
        ),
        (
            HEAD + "\n[[progressive.levels]]\n" + 'level = "Grand"\nmeter_seed = "$5"\n'
            'rate_of_progression = "1%"\n' + ROWS,
            "progressive.levels[0].level",
            "use lowercase letters, digits and single hyphens",
        ),
        (
            HEAD + row("royal-flush", "$500"),
            "progressive.meter_seed",
            "required unless levels are listed",
        ),
    ],
    ids=[
        "level-twice",
        "flat-terms-beside-levels",
        "levels-rates-over-the-wager",
        "ceiling-at-seed",
        "limit-below-seed",
        "trigger-on-a-hand-level",
        "meter-pay-names-no-level",
        "hand-pays-a-mystery-level",
        "fixed-pay-names-a-level",
        "level-name",
        "no-terms-no-levels",
    ],
)
def test_a_malformed_level_is_refused_naming_file_key_and_reason(
    document: str, key: str, reason: str
) -> None:
    with pytest.raises(PaytableError) as refused:
        parse_paytable(document, "levels.toml")
    assert refused.value.key == key
    assert reason in refused.value.reason
    assert str(refused.value).startswith("levels.toml: ")


def test_a_level_on_a_one_level_paytable_is_refused() -> None:
    one = HEAD.replace(
        "original_wager_returned = false",
        'meter_seed = "$1,000"\nrate_of_progression = "10%"\noriginal_wager_returned = false',
    )
    with pytest.raises(PaytableError, match="this paytable lists no levels"):
        parse_paytable(one + row("royal-flush", "100% of meter", "mini"), "one.toml")


def test_a_levelled_pool_takes_each_levels_terms_from_its_paytable(tmp_path: Path) -> None:
    """A seed or rate written for a levelled pool would say which level: refused."""
    plain = (
        four_levels().replace("must_hit_by", "limit").replace('past_trigger = "next-level"\n', "")
    )
    write(tmp_path, plain, "paytables/house-levels.toml")
    pool = 'paytable = "paytables/house-levels.toml"\nseed = "$2,000"'
    error = error_of(tmp_path, edited('paytable = "progressive-1"', pool))
    assert error.key == "pools[0].seed"
    assert "house-levels lists levels, each with its own terms" in error.reason
