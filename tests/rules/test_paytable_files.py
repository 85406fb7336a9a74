"""The paytable file loader: a malformed file is refused with its file, key and reason named.

Each case is a small TOML document written inline. It is loaded both as a file (through
``load_paytable_file``, so the error names the path) and as text (through ``parse_paytable``,
so the error names the given source). The module also covers ``parse_pay`` on every form the
seed prints and ``find_paytable`` by name and by path.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

import pytest

import controller
from controller.money import MoneyError
from controller.rules.cards import JokerMode
from controller.rules.lines import Line
from controller.rules.paytable import (
    FixedPay,
    MeterPay,
    Odds,
    Paytable,
    PaytableLine,
    ProgressiveTerms,
    Push,
    Wager,
)
from controller.rules.paytable_files import (
    PaytableError,
    find_paytable,
    load_paytable_file,
    parse_pay,
    parse_paytable,
    seed_paytables,
)

SHIPPED = Path(controller.__file__).resolve().parent / "paytables"


def header(
    *,
    name: str = "house",
    wager: str = "fortune-bonus",
    joker: str = "semi-wild",
    extra: str = "",
) -> str:
    """The top-level keys of a paytable document."""
    return (
        f'name = "{name}"\n'
        'title = "House table"\n'
        f'wager = "{wager}"\n'
        'source = "house rules"\n'
        f'joker = "{joker}"\n'
        f"{extra}"
    )


def progressive_terms(
    *, rate: str = "28%", reserve: str | None = None, seed: str = "$10,000", wager: str = "$1"
) -> str:
    """A ``[progressive]`` table."""
    reserve_key = f'reserve_rate = "{reserve}"\n' if reserve is not None else ""
    return (
        "\n[progressive]\n"
        f'wager = "{wager}"\n'
        f'meter_seed = "{seed}"\n'
        f'rate_of_progression = "{rate}"\n'
        f"{reserve_key}"
        "original_wager_returned = false\n"
    )


def row(line: str, pays: str, *, outcome: str = "A hand", envy: str | None = None) -> str:
    """One ``[[lines]]`` entry."""
    envy_key = f'envy = "{envy}"\n' if envy is not None else ""
    return f'\n[[lines]]\nline = "{line}"\noutcome = "{outcome}"\npays = "{pays}"\n{envy_key}'


FORTUNE = header() + row("flush", "4 to 1") + row("straight", "2 to 1")
PROGRESSIVE = (
    header(wager="progressive")
    + progressive_terms()
    + row("seven-card-straight-flush", "100% of meter")
    + row("royal-flush", "$500")
)


class Case(NamedTuple):
    """A malformed document, the key the error names and words its reason must contain."""

    text: str | bytes
    key: str
    reason: str


MALFORMED = {
    "invalid-toml": Case('name = "house\n', "(file)", "not valid TOML"),
    "not-utf8": Case(b"name = '\xff'\n", "(file)", "not valid TOML"),
    "unknown-top-level-key": Case(
        header(extra='colour = "red"\n') + row("flush", "4 to 1"),
        "colour",
        "unknown field `colour`",
    ),
    "missing-lines": Case(header(), "lines", "missing required field `lines`"),
    "odds-pay-nothing": Case(header() + row("flush", "0 to 1"), "lines[0].pays", "pays nothing"),
    "fixed-pays-nothing": Case(
        header(wager="progressive") + progressive_terms() + row("royal-flush", "$0"),
        "lines[0].pays",
        "pays nothing",
    ),
    "envy-on-ace-high": Case(
        header(wager="ace-high") + row("dealer-and-player-ace-high", "20 to 1") + 'envy = "$5"\n',
        "lines[0].envy",
        "no Envy column",
    ),
    "no-lines": Case(header(extra="lines = []\n"), "lines", "at least one line"),
    "lines-not-an-array": Case(
        header() + '\n[lines]\nline = "flush"\n', "lines", "Expected `array`"
    ),
    "missing-title": Case(
        header().replace('title = "House table"\n', "") + row("flush", "4 to 1"),
        "title",
        "missing required field `title`",
    ),
    "bad-name": Case(
        header(name="House Table") + row("flush", "4 to 1"), "name", "lowercase letters"
    ),
    "unknown-wager": Case(
        header(wager="pai-gow") + row("flush", "4 to 1"), "wager", "unknown wager 'pai-gow'"
    ),
    "unknown-joker-mode": Case(
        header(joker="wild") + row("flush", "4 to 1"), "joker", "unknown joker mode 'wild'"
    ),
    "unknown-line-slug": Case(
        header() + row("four-aces", "100 to 1"), "lines[0].line", "unknown line 'four-aces'"
    ),
    "unknown-key-in-line": Case(
        header() + row("flush", "4 to 1") + 'colour = "red"\n',
        "lines[0].colour",
        "unknown field `colour`",
    ),
    "line-missing-pays": Case(
        header() + '\n[[lines]]\nline = "flush"\noutcome = "Flush"\n',
        "lines[0].pays",
        "missing required field `pays`",
    ),
    "pays-not-a-string": Case(
        header() + '\n[[lines]]\nline = "flush"\noutcome = "Flush"\npays = 4\n',
        "lines[0].pays",
        "Expected `str`",
    ),
    "three-pair-in-progressive": Case(
        header(wager="progressive") + progressive_terms() + row("three-pair", "$5"),
        "lines[0].line",
        "three-pair is not a progressive hand",
    ),
    "ace-high-line-in-fortune": Case(
        header() + row("dealer-and-player-ace-high", "20 to 1"),
        "lines[0].line",
        "dealer-and-player-ace-high is not a fortune-bonus hand",
    ),
    "five-of-a-kind-in-fortune": Case(
        header() + row("five-of-a-kind", "250 to 1"),
        "lines[0].line",
        "five-of-a-kind is not a fortune-bonus hand",
    ),
    "bad-pay-text": Case(header() + row("flush", "4 for 1"), "lines[0].pays", "is not a pay"),
    "bad-dollar-pay": Case(
        header(wager="progressive") + progressive_terms() + row("royal-flush", "$5,00"),
        "lines[0].pays",
        "is not a dollar amount",
    ),
    "odds-in-progressive": Case(
        header(wager="progressive") + progressive_terms() + row("royal-flush", "100 to 1"),
        "lines[0].pays",
        "a progressive line pays a dollar or meter pay",
    ),
    "dollars-in-fortune": Case(
        header() + row("royal-flush", "$500"),
        "lines[0].pays",
        "a fortune-bonus line pays odds ('N to 1') or Push",
    ),
    "meter-pay-over-100-percent": Case(
        header(wager="progressive") + progressive_terms() + row("royal-flush", "150% of meter"),
        "lines[0].pays",
        "at most 100%",
    ),
    "odds-rising-down-the-list": Case(
        header() + row("flush", "4 to 1") + row("full-house", "5 to 1"),
        "lines[1].pays",
        "5 to 1 pays more than lines[0] above it",
    ),
    "push-above-odds": Case(
        header() + row("three-pair", "Push") + row("straight", "2 to 1"),
        "lines[1].pays",
        "2 to 1 pays more than lines[0] above it",
    ),
    "fixed-pays-rising-down-the-list": Case(
        header(wager="progressive")
        + progressive_terms()
        + row("straight-flush", "$100")
        + row("royal-flush", "$500"),
        "lines[1].pays",
        "$500 pays more than lines[0] above it",
    ),
    "duplicate-line": Case(
        header() + row("flush", "4 to 1") + row("flush", "3 to 1"),
        "lines[1].line",
        "flush is listed twice",
    ),
    "envy-not-dollars": Case(
        header() + row("four-of-a-kind", "20 to 1", envy="5"),
        "lines[0].envy",
        "'5' is not a dollar amount",
    ),
    "envy-zero": Case(
        header() + row("four-of-a-kind", "20 to 1", envy="$0"),
        "lines[0].envy",
        "an Envy amount is positive",
    ),
    "envy-not-a-string": Case(
        header() + row("four-of-a-kind", "20 to 1") + "envy = 5\n",
        "lines[0].envy",
        "Expected `str | null`, got `int`",
    ),
    "progressive-without-terms": Case(
        header(wager="progressive") + row("royal-flush", "$500"),
        "progressive",
        "required for progressive paytables",
    ),
    "terms-on-fortune": Case(
        header() + progressive_terms() + row("flush", "4 to 1"),
        "progressive",
        "only for progressive paytables",
    ),
    "rates-over-100-percent": Case(
        header(wager="progressive")
        + progressive_terms(rate="60%", reserve="40.5%")
        + row("royal-flush", "$500"),
        "progressive",
        "exceeds 100% of the wager",
    ),
    "rate-not-a-percentage": Case(
        header(wager="progressive") + progressive_terms(rate="28") + row("royal-flush", "$500"),
        "progressive.rate_of_progression",
        "'28' is not a percentage",
    ),
    "reserve-not-a-percentage": Case(
        header(wager="progressive")
        + progressive_terms(reserve="one percent")
        + row("royal-flush", "$500"),
        "progressive.reserve_rate",
        "is not a percentage",
    ),
    "meter-seed-zero": Case(
        header(wager="progressive") + progressive_terms(seed="$0") + row("royal-flush", "$500"),
        "progressive.meter_seed",
        "must be above $0",
    ),
    "wager-not-dollars": Case(
        header(wager="progressive") + progressive_terms(wager="1") + row("royal-flush", "$500"),
        "progressive.wager",
        "is not a dollar amount",
    ),
    "terms-missing-key": Case(
        header(wager="progressive")
        + progressive_terms().replace('meter_seed = "$10,000"\n', "")
        + row("royal-flush", "$500"),
        "progressive.meter_seed",
        "missing required field `meter_seed`",
    ),
    "wager-returned-not-a-bool": Case(
        header(wager="progressive")
        + progressive_terms().replace("= false", '= "no"')
        + row("royal-flush", "$500"),
        "progressive.original_wager_returned",
        "Expected `bool`",
    ),
}


def write(tmp_path: Path, text: str | bytes, stem: str = "house") -> Path:
    """Write a document as ``<stem>.toml``."""
    path = tmp_path / f"{stem}.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def assert_names(error: PaytableError, source: str, key: str, reason: str) -> None:
    """The error names the source, the key and a specific reason, in its message too."""
    assert error.source == source
    assert error.key == key
    assert reason in error.reason
    assert str(error) == f"{source}: {key}: {error.reason}"


# Well-formed documents load -----------------------------------------------------------------


def test_well_formed_fortune_document_loads(tmp_path: Path) -> None:
    path = write(tmp_path, header() + row("flush", "4 to 1", envy="$5") + row("straight", "Push"))
    assert load_paytable_file(path) == Paytable(
        name="house",
        title="House table",
        wager=Wager.FORTUNE_BONUS,
        source="house rules",
        joker=JokerMode.SEMI_WILD,
        lines=(
            PaytableLine(Line.FLUSH, "A hand", Odds(4), 500),
            PaytableLine(Line.STRAIGHT, "A hand", Push(), None),
        ),
    )


def test_well_formed_progressive_document_loads_and_reserve_defaults_to_zero(
    tmp_path: Path,
) -> None:
    paytable = load_paytable_file(write(tmp_path, PROGRESSIVE))
    assert paytable.progressive == ProgressiveTerms(
        wager_cents=100,
        meter_seed_cents=1_000_000,
        rate_of_progression=Fraction(28, 100),
        reserve_rate=Fraction(0),
        original_wager_returned=False,
    )
    assert [row.pays for row in paytable.lines] == [MeterPay(Fraction(1)), FixedPay(50_000)]


def test_equal_pays_down_the_list_are_accepted() -> None:
    """Fortune paytable 5 prints Four-of-a-kind and Full house both at 5 to 1."""
    paytable = parse_paytable(
        header() + row("four-of-a-kind", "5 to 1", envy="$6") + row("full-house", "5 to 1"), "doc"
    )
    assert [row.pays for row in paytable.lines] == [Odds(5), Odds(5)]


def test_rates_summing_to_exactly_100_percent_are_accepted() -> None:
    text = (
        header(wager="progressive")
        + progressive_terms(rate="99.25%", reserve="0.75%")
        + row("royal-flush", "$500")
    )
    terms = parse_paytable(text, "doc").progressive
    assert terms is not None
    assert terms.rate_of_progression + terms.reserve_rate == 1
    assert terms.reserve_rate == Fraction(3, 400)


def test_meter_pay_may_sit_above_a_larger_fixed_pay() -> None:
    """Between a meter pay and a fixed pay the listed order decides (the meter moves)."""
    text = (
        header(wager="progressive")
        + progressive_terms()
        + row("five-aces", "10% of meter")
        + row("five-of-a-kind", "$1,000")
        + row("royal-flush", "$500")
    )
    assert len(parse_paytable(text, "doc").lines) == 3


# Malformed documents are refused ------------------------------------------------------------


@pytest.mark.parametrize(("text", "key", "reason"), MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_file_is_refused_naming_file_key_and_reason(
    tmp_path: Path, text: str | bytes, key: str, reason: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(PaytableError) as caught:
        load_paytable_file(path)
    assert_names(caught.value, str(path), key, reason)


@pytest.mark.parametrize(("text", "key", "reason"), MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_document_is_refused_naming_its_source(
    text: str | bytes, key: str, reason: str
) -> None:
    with pytest.raises(PaytableError) as caught:
        parse_paytable(text, "operator upload #7")
    assert_names(caught.value, "operator upload #7", key, reason)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (header(extra='colour = "red"\n') + row("flush", "4 to 1"), "colour"),
        (header(), "lines"),
    ],
    ids=["unknown-top-level-key", "missing-lines"],
)
def test_top_level_field_error_names_the_field_as_its_key(text: str, key: str) -> None:
    with pytest.raises(PaytableError) as caught:
        parse_paytable(text, "doc")
    assert caught.value.key == key


def test_name_must_match_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, FORTUNE, stem="house-fortune")
    with pytest.raises(PaytableError) as caught:
        load_paytable_file(path)
    assert_names(caught.value, str(path), "name", "'house' does not match the file name")


def test_parse_paytable_does_not_check_a_file_name() -> None:
    assert parse_paytable(FORTUNE, "anything.toml").name == "house"


def test_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(PaytableError) as caught:
        load_paytable_file(path)
    assert_names(caught.value, str(path), "(file)", "cannot read")


# parse_pay ----------------------------------------------------------------------------------

SEED_PAYS = {
    "20 to 1": Odds(20),
    "2 to 1": Odds(2),
    "5,000 to 1": Odds(5_000),
    "8,000 to 1": Odds(8_000),
    "Push": Push(),
    "$4": FixedPay(400),
    "$2,500": FixedPay(250_000),
    "10% of meter": MeterPay(Fraction(1, 10)),
    "100% of meter": MeterPay(Fraction(1)),
    "$5,000/100% of meter": MeterPay(Fraction(1), 500_000),
    "$5,000/20% of meter": MeterPay(Fraction(1, 5), 500_000),
    "$5,000/10% of meter": MeterPay(Fraction(1, 10), 500_000),
}


@pytest.mark.parametrize(("text", "pay"), SEED_PAYS.items(), ids=SEED_PAYS.keys())
def test_parse_pay_reads_every_seed_form_and_prints_it_back(text: str, pay: object) -> None:
    assert parse_pay(text) == pay
    assert str(parse_pay(text)) == text


def test_parse_pay_ignores_surrounding_space_and_commas_are_optional() -> None:
    assert parse_pay("  5,000 to 1 ") == Odds(5_000)
    assert parse_pay("5000 to 1") == Odds(5_000)
    assert parse_pay("$1.50") == FixedPay(150)
    assert parse_pay("0.75% of meter") == MeterPay(Fraction(3, 400))


@pytest.mark.parametrize(
    "text",
    ["", "push", "5 to 2", "5,00 to 1", "$", "$5,00", "10 % of meter", "$5,000/% of meter", "1:1"],
)
def test_parse_pay_refuses_what_is_not_a_pay(text: str) -> None:
    with pytest.raises(MoneyError):
        parse_pay(text)


# find_paytable ------------------------------------------------------------------------------


def test_find_paytable_by_name_gives_the_seed_paytable() -> None:
    assert find_paytable("fortune-3") == seed_paytables()["fortune-3"]
    assert find_paytable("progressive-4").progressive is not None


def test_find_paytable_by_path_loads_the_file(tmp_path: Path) -> None:
    assert find_paytable(str(write(tmp_path, FORTUNE))).name == "house"
    shipped = SHIPPED / "ace-high-2.toml"
    assert find_paytable(str(shipped)) == seed_paytables()["ace-high-2"]


def test_find_paytable_by_path_checks_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, FORTUNE, stem="other")
    with pytest.raises(PaytableError) as caught:
        find_paytable(str(path))
    assert caught.value.key == "name"


def test_find_paytable_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(PaytableError) as caught:
        find_paytable("fortune-9")
    assert_names(caught.value, "fortune-9", "(name)", "no such paytable")
    assert "fortune-1" in caught.value.reason
    assert "progressive-7" in caught.value.reason


def test_find_paytable_missing_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    with pytest.raises(PaytableError) as caught:
        find_paytable(str(path))
    assert_names(caught.value, str(path), "(file)", "cannot read")
