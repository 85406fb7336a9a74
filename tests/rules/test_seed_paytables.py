"""The shipped paytables carry exactly the values printed in 58 Pa. Code § 688a.12 (b)-(d).

The regulation text in ``docs/regulations/000_a1ae67cc7bacd490.txt`` is parsed here by a small
parser of its own, independent of the loader: the text is split into subsections (b), (c) and
(d), each subsection into its "Paytable N" blocks, and each block into rows of outcome, pay and
Envy, followed by the progressive attributes. Every shipped paytable is then compared, row by
row and attribute by attribute, with the block the regulation prints for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

import controller
from controller.rules.cards import JokerMode
from controller.rules.lines import Line
from controller.rules.paytable import FixedPay, MeterPay, Odds, Pay, Paytable, Push, Wager
from controller.rules.paytable_files import load_paytable_file, parse_pay, seed_paytables

REGULATION = (
    Path(__file__).resolve().parents[2] / "docs" / "regulations" / "000_a1ae67cc7bacd490.txt"
)
SHIPPED = Path(controller.__file__).resolve().parent / "paytables"

FAMILY = {"b": "ace-high", "c": "fortune", "d": "progressive"}
WAGER = {"b": Wager.ACE_HIGH, "c": Wager.FORTUNE_BONUS, "d": Wager.PROGRESSIVE}
TITLE = {
    "b": "Ace High Bonus",
    "c": "Fortune Bonus + Envy",
    "d": "Progressive Payout + Envy",
}

_SUBSECTION = re.compile(r"^\(([a-z])\) ")
_HEADING = re.compile(r"^Paytable (\d+)(?: \((\$[\d,]+) wager\))?$")
_COLUMNS = frozenset({"Outcome", "Pay", "Envy", "Pay & Progressive"})
_PAY = re.compile(r"^(?:[\d,]+ to 1|Push|\$[\d,]+|(?:\$[\d,]+/)?\d+% of meter)$")
_ENVY = re.compile(r"^\$[\d,]+$")
_ATTRIBUTE = re.compile(
    r"^(?:Meter seed: (?P<seed>\$[\d,]+)"
    r"|Rate of progression: (?P<rate>\d+%)"
    r"|Reserve rate: (?P<reserve>\d+%)"
    r"|Original wager (?P<returned>not )?returned to player"
    r"|(?P<wild>Fully wild joker))$"
)


@dataclass(frozen=True)
class SeedRow:
    """One printed row: the outcome, the pay and the Envy amount, as text."""

    outcome: str
    pay: str
    envy: str | None


@dataclass(frozen=True)
class SeedPaytable:
    """One "Paytable N" block of subsection (b), (c) or (d), as printed."""

    subsection: str
    number: int
    rows: tuple[SeedRow, ...]
    envy_column: bool
    wager: str | None = None
    meter_seed: str | None = None
    rate_of_progression: str | None = None
    reserve_rate: str | None = None
    wager_returned: bool | None = None
    fully_wild: bool = False

    @property
    def name(self) -> str:
        """The shipped paytable's name for this block."""
        return f"{FAMILY[self.subsection]}-{self.number}"


def _subsections(text: str) -> dict[str, list[str]]:
    """The lines of each lettered subsection, after its opening sentence."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if match := _SUBSECTION.match(line):
            current = sections.setdefault(match.group(1), [])
        elif current is not None:
            current.append(line.strip())
    return sections


def _block(subsection: str, number: int, wager: str | None, body: list[str]) -> SeedPaytable:
    """Parse one block: the column headings, the rows, then the progressive attributes."""
    columns = []
    while body and body[0] in _COLUMNS:
        columns.append(body.pop(0))
    assert "Pay" in columns or "Pay & Progressive" in columns, (subsection, number, columns)
    envy_column = "Envy" in columns
    rows: list[SeedRow] = []
    attributes: dict[str, str] = {}
    while body:
        line = body.pop(0)
        if match := _ATTRIBUTE.match(line):
            attributes.update({key: value for key, value in match.groupdict().items() if value})
            if line.startswith("Original wager"):
                attributes["returned"] = "no" if match.group("returned") else "yes"
            continue
        assert not attributes, f"row {line!r} after the attributes of ({subsection}) {number}"
        pay = body.pop(0)
        assert _PAY.match(pay), f"({subsection}) Paytable {number}: {pay!r} is not a pay"
        envy = body.pop(0) if envy_column and body and _ENVY.match(body[0]) else None
        rows.append(SeedRow(line, pay, envy))
    returned = attributes.get("returned")
    return SeedPaytable(
        subsection=subsection,
        number=number,
        rows=tuple(rows),
        envy_column=envy_column,
        wager=wager,
        meter_seed=attributes.get("seed"),
        rate_of_progression=attributes.get("rate"),
        reserve_rate=attributes.get("reserve"),
        wager_returned=None if returned is None else returned == "yes",
        fully_wild="wild" in attributes,
    )


def parse_regulation(text: str) -> dict[str, SeedPaytable]:
    """Every paytable block of § 688a.12 (b), (c) and (d), by shipped name, in printed order."""
    tables: dict[str, SeedPaytable] = {}
    for subsection in ("b", "c", "d"):
        blocks: list[tuple[int, str | None, list[str]]] = []
        for line in _subsections(text)[subsection]:
            if match := _HEADING.match(line):
                blocks.append((int(match.group(1)), match.group(2), []))
            else:
                assert blocks, f"({subsection}): {line!r} before the first paytable"
                blocks[-1][2].append(line)
        for number, wager, body in blocks:
            table = _block(subsection, number, wager, body)
            tables[table.name] = table
    return tables


SEED = parse_regulation(REGULATION.read_text(encoding="utf-8"))
SHIPPED_TABLES = seed_paytables()


def _names(subsection: str) -> list[str]:
    return [name for name, table in SEED.items() if table.subsection == subsection]


def _cents(dollars: str) -> int:
    """``$5,000`` as cents, by the test's own reading."""
    return int(dollars.removeprefix("$").replace(",", "")) * 100


def _seed_value(text: str) -> tuple[object, ...]:
    """A printed pay as a plain value, by the test's own reading of the seed's forms."""
    if text == "Push":
        return ("push",)
    if match := re.fullmatch(r"([\d,]+) to 1", text):
        return ("odds", int(match.group(1).replace(",", "")))
    if match := re.fullmatch(r"(?:(\$[\d,]+)/)?(\d+)% of meter", text):
        fixed = _cents(match.group(1)) if match.group(1) else 0
        return ("meter", Fraction(int(match.group(2)), 100), fixed)
    if re.fullmatch(r"\$[\d,]+", text):
        return ("fixed", _cents(text))
    pytest.fail(f"unknown pay form {text!r}")


def _model_value(pay: Pay) -> tuple[object, ...]:
    """A loaded pay as the same plain value."""
    match pay:
        case Push():
            return ("push",)
        case Odds(to_one=to_one):
            return ("odds", to_one)
        case MeterPay(percent=percent, fixed_cents=fixed):
            return ("meter", percent, fixed)
        case FixedPay(cents=cents):
            return ("fixed", cents)
    pytest.fail(f"unknown pay {pay!r}")


def _assert_rows_match(seed: SeedPaytable, shipped: Paytable) -> None:
    """Same number of rows, and each row's outcome, pay and Envy as printed, in order."""
    assert [row.outcome for row in shipped.lines] == [row.outcome for row in seed.rows]
    for index, (printed, row) in enumerate(zip(seed.rows, shipped.lines, strict=True)):
        where = f"{shipped.name} row {index} ({printed.outcome})"
        assert _model_value(row.pays) == _seed_value(printed.pay), where
        assert row.pays == parse_pay(printed.pay), where
        assert str(row.pays) == printed.pay, where
        expected_envy = None if printed.envy is None else _cents(printed.envy)
        assert row.envy_cents == expected_envy, where


# The parser itself ------------------------------------------------------------------------


def test_688a12_regulation_prints_five_ace_high_six_fortune_seven_progressive_paytables() -> None:
    """§ 688a.12(b) has paytables 1-5, (c) has 1-6, (d) has 1-7, in that order."""
    expected = (
        [f"ace-high-{n}" for n in range(1, 6)]
        + [f"fortune-{n}" for n in range(1, 7)]
        + [f"progressive-{n}" for n in range(1, 8)]
    )
    assert list(SEED) == expected


def test_688a12_parser_reads_known_printed_values() -> None:
    """Spot checks that the test's own parser reads the text as a person does."""
    assert SEED["ace-high-2"].rows[0] == SeedRow(
        "Both dealer and player have ace high", "40 to 1", None
    )
    fortune = SEED["fortune-1"]
    assert len(fortune.rows) == 12
    assert fortune.rows[0] == SeedRow("7 card straight flush", "5,000 to 1", "$1,000")
    assert fortune.rows[7] == SeedRow("Full house", "5 to 1", None)
    assert fortune.rows[-1] == SeedRow("Three pair", "Push", None)
    assert len(SEED["fortune-2"].rows) == 11
    four = SEED["progressive-4"]
    assert four.rows[0] == SeedRow("7 card straight flush", "$5,000/100% of meter", "$1,000")
    assert four.rows[3] == SeedRow("Five aces", "$2,500", "$100")
    assert (four.wager, four.meter_seed, four.rate_of_progression, four.reserve_rate) == (
        "$5",
        "$10,000",
        "1%",
        "1%",
    )
    assert four.wager_returned is True
    assert not four.fully_wild
    two = SEED["progressive-2"]
    assert (two.wager, two.rate_of_progression, two.reserve_rate) == ("$1", "7%", None)
    assert two.wager_returned is False
    assert two.fully_wild
    assert SEED["progressive-7"].rows[0] == SeedRow("Five aces", "100% of meter", None)


# The set of shipped paytables ---------------------------------------------------------------


def test_688a12_ships_exactly_the_eighteen_seed_paytables_in_seed_order() -> None:
    """Ace High 1-5 (b), Fortune 1-6 (c), Progressive 1-7 (d), and nothing else."""
    assert list(SHIPPED_TABLES) == list(SEED)
    assert sorted(path.stem for path in SHIPPED.glob("*.toml")) == sorted(SEED)


@pytest.mark.parametrize("name", list(SEED))
def test_688a12_shipped_file_is_named_after_its_paytable(name: str) -> None:
    """Each file loads on its own, and its ``name`` is its file name."""
    assert load_paytable_file(SHIPPED / f"{name}.toml") == SHIPPED_TABLES[name]


@pytest.mark.parametrize("name", list(SEED))
def test_688a12_source_names_subsection_and_paytable_number(name: str) -> None:
    """``source`` cites § 688a.12, the subsection and the paytable number."""
    seed = SEED[name]
    shipped = SHIPPED_TABLES[name]
    assert shipped.source == f"58 Pa. Code § 688a.12({seed.subsection}), Paytable {seed.number}"
    assert shipped.wager is WAGER[seed.subsection]


@pytest.mark.parametrize("name", list(SEED))
def test_688a12_title_names_paytable_number_and_wager(name: str) -> None:
    """The title gives the family and number, and for (d) the wager the table is for."""
    seed = SEED[name]
    expected = f"{TITLE[seed.subsection]}, Paytable {seed.number}"
    if seed.wager is not None:
        expected += f" ({seed.wager} wager)"
    assert SHIPPED_TABLES[name].title == expected


# The rows of each paytable ------------------------------------------------------------------


@pytest.mark.parametrize("name", _names("b"))
def test_688a12_b_ace_high_paytables_match_seed(name: str) -> None:
    """§ 688a.12(b): each Ace High Bonus row's outcome and odds as printed; no Envy."""
    seed = SEED[name]
    shipped = SHIPPED_TABLES[name]
    assert not seed.envy_column
    _assert_rows_match(seed, shipped)
    assert not shipped.has_envy
    assert shipped.joker is JokerMode.SEMI_WILD
    assert shipped.progressive is None


@pytest.mark.parametrize("name", _names("c"))
def test_688a12_c_fortune_paytables_match_seed(name: str) -> None:
    """§ 688a.12(c): each Fortune Bonus row's outcome, odds and Envy amount as printed."""
    seed = SEED[name]
    shipped = SHIPPED_TABLES[name]
    assert seed.envy_column
    _assert_rows_match(seed, shipped)
    assert shipped.joker is JokerMode.SEMI_WILD
    assert shipped.progressive is None


@pytest.mark.parametrize("name", _names("d"))
def test_688a12_d_progressive_paytables_match_seed(name: str) -> None:
    """§ 688a.12(d): each Progressive Payout row's outcome, pay and Envy amount as printed."""
    seed = SEED[name]
    shipped = SHIPPED_TABLES[name]
    _assert_rows_match(seed, shipped)
    assert shipped.has_envy == seed.envy_column


@pytest.mark.parametrize("name", _names("d"))
def test_688a12_d_progressive_terms_match_seed(name: str) -> None:
    """§ 688a.12(d): wager, meter seed, rates, wager returned and joker mode as printed.

    A table that states no reserve rate has none (0%).
    """
    seed = SEED[name]
    shipped = SHIPPED_TABLES[name]
    terms = shipped.progressive
    assert terms is not None
    assert seed.wager is not None
    assert seed.meter_seed is not None
    assert seed.rate_of_progression is not None
    assert seed.wager_returned is not None
    assert terms.wager_cents == _cents(seed.wager)
    assert terms.meter_seed_cents == _cents(seed.meter_seed)
    assert terms.rate_of_progression == Fraction(int(seed.rate_of_progression.rstrip("%")), 100)
    assert isinstance(terms.rate_of_progression, Fraction)
    expected_reserve = (
        Fraction(0)
        if seed.reserve_rate is None
        else Fraction(int(seed.reserve_rate.rstrip("%")), 100)
    )
    assert terms.reserve_rate == expected_reserve
    assert isinstance(terms.reserve_rate, Fraction)
    assert terms.original_wager_returned is seed.wager_returned
    expected_joker = JokerMode.FULLY_WILD if seed.fully_wild else JokerMode.SEMI_WILD
    assert shipped.joker is expected_joker


# Which line each printed outcome is paid on -------------------------------------------------

_OUTCOME_LINE = {
    "Both dealer and player have ace high": Line.BOTH_ACE_HIGH,
    "Only dealer has ace high, with joker": Line.DEALER_ONLY_ACE_HIGH_WITH_JOKER,
    "Only dealer has ace high, no joker": Line.DEALER_ONLY_ACE_HIGH_NO_JOKER,
    "Royal flush + royal match": Line.ROYAL_FLUSH_PLUS_SUITED_KING_QUEEN,
    "7 card straight flush with joker": Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
    "7 card straight flush w/joker": Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
    "7 card natural straight flush": Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL,
    "7 card wild straight flush": Line.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER,
    "Five aces": Line.FIVE_ACES,
    "Five-of-a-kind": Line.FIVE_OF_A_KIND,
    "Royal flush": Line.ROYAL_FLUSH,
    "Straight flush": Line.STRAIGHT_FLUSH,
    "Four-of-a-kind": Line.FOUR_OF_A_KIND,
    "Full house": Line.FULL_HOUSE,
    "Flush": Line.FLUSH,
    "Three-of-a-kind": Line.THREE_OF_A_KIND,
    "Straight": Line.STRAIGHT,
    "Three pair": Line.THREE_PAIR,
}


def _seven_card_straight_flush(seed: SeedPaytable) -> Line:
    """The line a bare "7 card straight flush" row is paid on.

    In (c) and in a (d) table that also lists the joker version, it is the natural one
    (§ 645a.6(d)(1)); otherwise it is § 645a.6(f)(1)'s, with or without the joker.
    """
    outcomes = {row.outcome for row in seed.rows}
    if seed.subsection == "c" or "7 card straight flush w/joker" in outcomes:
        return Line.SEVEN_CARD_STRAIGHT_FLUSH_NATURAL
    return Line.SEVEN_CARD_STRAIGHT_FLUSH


@pytest.mark.parametrize("name", list(SEED))
def test_645a6_each_printed_outcome_is_paid_on_its_line(name: str) -> None:
    """§ 645a.6(d) and (f): each printed outcome maps to the line docs/rules.md's reading gives."""
    seed = SEED[name]
    expected = [
        _seven_card_straight_flush(seed)
        if row.outcome == "7 card straight flush"
        else _OUTCOME_LINE[row.outcome]
        for row in seed.rows
    ]
    assert [row.line for row in SHIPPED_TABLES[name].lines] == expected
