"""Paytable TOML files: the seed paytables shipped in ``controller/paytables/`` and operators' own.

A paytable file keeps the seed's own words for every value (``"5,000 to 1"``, ``"$500"``,
``"$5,000/100% of meter"``, ``"28%"``), so that a reviewer can lay it beside the regulation.
The loader turns it into a :class:`controller.rules.paytable.Paytable` and rejects a malformed file
with a :class:`PaytableError` naming the file, the key and the reason. The format is described
in docs/paytables.md.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from controller.money import (
    RATES_OVER_WAGER,
    MoneyError,
    parse_dollars,
    parse_percent,
    rates_over_wager,
)
from controller.rules.cards import JokerMode
from controller.rules.lines import Line
from controller.rules.paytable import (
    MAIN_LEVEL,
    WAGER_LINES,
    FixedPay,
    MeterPay,
    Odds,
    Pay,
    Paytable,
    PaytableLine,
    ProgressiveTerms,
    Push,
    Wager,
)
from controller.rules.paytable_levels import RawLevel, check_levels, levelled_terms
from controller.rules.paytable_values import NAME, PaytableError, cents, rate

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_ODDS: Final = re.compile(r"^(\d{1,3}(?:,\d{3})*|\d+) to 1$")
_METER: Final = re.compile(r"^(?:(\$[\d,.]+)/)?(\d+(?:\.\d+)?%) of meter$")
__all__ = [
    "PARSED",
    "SAMPLES",
    "PaytableError",
    "find_paytable",
    "load_paytable_file",
    "parse_pay",
    "parse_paytable",
    "sample_paytables",
    "seed_paytables",
]

SAMPLES: Final = "samples"
"""The folder of ``controller/paytables`` that holds the sample paytables."""


class _RawLine(msgspec.Struct, forbid_unknown_fields=True):
    line: str
    outcome: str
    pays: str
    envy: str | None = None
    level: str | None = None


class _RawProgressive(msgspec.Struct, forbid_unknown_fields=True):
    wager: str
    original_wager_returned: bool
    meter_seed: str | None = None
    rate_of_progression: str | None = None
    reserve_rate: str | None = None
    levels: list[RawLevel] | None = None


class _RawPaytable(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    title: str
    wager: str
    source: str
    joker: str
    lines: list[_RawLine]
    progressive: _RawProgressive | None = None
    sample: bool = False


def parse_pay(text: str) -> Pay:
    """A pay in the seed's words.

    ``N to 1``, ``Push``, ``$500``, ``10% of meter`` or ``$5,000/100% of meter``.
    """
    text = text.strip()
    if text == "Push":
        return Push()
    if odds := _ODDS.match(text):
        return Odds(int(odds.group(1).replace(",", "")))
    if meter := _METER.match(text):
        fixed, percent = meter.groups()
        return MeterPay(parse_percent(percent), parse_dollars(fixed) if fixed else 0)
    if text.startswith("$"):
        return FixedPay(parse_dollars(text))
    raise MoneyError(
        f"{text!r} is not a pay: expected 'N to 1', 'Push', '$N', 'P% of meter' or '$N/P% of meter'"
    )


_FIELD: Final = re.compile(r"Object (?:contains unknown|missing required) field `([^`]+)`")


def _key_of(error: msgspec.ValidationError) -> tuple[str, str]:
    """Split msgspec's "reason - at `$.key`" into (key, reason), naming a missing/unknown field."""
    message = str(error)
    reason, _, where = message.rpartition(" - at `")
    if not reason:
        reason, where = message, ""
    key = where.rstrip("`").removeprefix("$").removeprefix(".")
    if field := _FIELD.search(reason):
        key = f"{key}.{field.group(1)}" if key else field.group(1)
    return key or "(file)", reason


def _check_order(source: str, rows: list[PaytableLine]) -> None:
    """Odds and fixed pays must not rise down the list: first-listed is highest-paying."""
    previous: dict[type, tuple[int, int]] = {}
    for index, row in enumerate(rows):
        pay = row.pays
        value: tuple[type, int] | None = None
        if isinstance(pay, Odds | Push):
            value = (Odds, pay.to_one if isinstance(pay, Odds) else 0)
        elif isinstance(pay, FixedPay):
            value = (FixedPay, pay.cents)
        if value is None:
            continue
        kind, amount = value
        if kind in previous and amount > previous[kind][1]:
            raise PaytableError(
                source,
                f"lines[{index}].pays",
                f"{pay} pays more than lines[{previous[kind][0]}] above it; "
                "list lines in order of pay",
            )
        previous[kind] = (index, amount)


def _line(source: str, index: int, raw: _RawLine, wager: Wager) -> PaytableLine:
    key = f"lines[{index}]"
    try:
        line = Line(raw.line)
    except ValueError as error:
        raise PaytableError(source, f"{key}.line", f"unknown line {raw.line!r}") from error
    if line not in WAGER_LINES[wager]:
        raise PaytableError(source, f"{key}.line", f"{line} is not a {wager} hand")
    try:
        pays = parse_pay(raw.pays)
    except MoneyError as error:
        raise PaytableError(source, f"{key}.pays", str(error)) from error
    progressive = wager is Wager.PROGRESSIVE
    if progressive != isinstance(pays, FixedPay | MeterPay):
        wanted = "a dollar or meter pay" if progressive else "odds ('N to 1') or Push"
        raise PaytableError(
            source, f"{key}.pays", f"a {wager} line pays {wanted}, not {raw.pays!r}"
        )
    pays_nothing = isinstance(pays, Odds) and pays.to_one < 1
    if pays_nothing or (isinstance(pays, FixedPay) and pays.cents <= 0):
        raise PaytableError(
            source, f"{key}.pays", f"{raw.pays!r} pays nothing; use Push or drop it"
        )
    if isinstance(pays, MeterPay) and not 0 < pays.percent <= 1:
        raise PaytableError(
            source, f"{key}.pays", "a meter percentage is above 0% and at most 100%"
        )
    envy = None
    if raw.envy is not None and wager is Wager.ACE_HIGH:
        raise PaytableError(source, f"{key}.envy", "Ace High paytables have no Envy column")
    if raw.envy is not None and wager is Wager.INSURANCE:
        raise PaytableError(source, f"{key}.envy", "insurance paytables have no Envy column")
    if raw.envy is not None:
        try:
            envy = parse_dollars(raw.envy)
        except MoneyError as error:
            raise PaytableError(source, f"{key}.envy", str(error)) from error
        if envy <= 0:
            raise PaytableError(source, f"{key}.envy", "an Envy amount is positive")
    if raw.level is not None and wager is not Wager.PROGRESSIVE:
        raise PaytableError(source, f"{key}.level", "only a progressive line pays from a level")
    return PaytableLine(line, raw.outcome, pays, envy, raw.level or MAIN_LEVEL)


_FLAT: Final = ("meter_seed", "rate_of_progression", "reserve_rate")
"""A one-level paytable's terms, written in ``[progressive]`` itself."""


def _progressive(source: str, raw: _RawProgressive) -> ProgressiveTerms:
    wager = cents(source, "progressive.wager", raw.wager)
    if raw.levels is not None:
        flat = [key for key in _FLAT if getattr(raw, key) is not None]
        return levelled_terms(source, raw.levels, flat, wager, returned=raw.original_wager_returned)
    for key in ("meter_seed", "rate_of_progression"):
        if getattr(raw, key) is None:
            raise PaytableError(
                source,
                f"progressive.{key}",
                f"Object missing required field `{key}` (required unless levels are listed)",
            )
    seed = cents(source, "progressive.meter_seed", raw.meter_seed or "")
    progression = rate(source, "progressive.rate_of_progression", raw.rate_of_progression or "")
    reserve = rate(source, "progressive.reserve_rate", raw.reserve_rate or "0%")
    if rates_over_wager(progression, reserve):
        raise PaytableError(source, "progressive", RATES_OVER_WAGER)
    return ProgressiveTerms(
        wager_cents=wager,
        meter_seed_cents=seed,
        rate_of_progression=progression,
        reserve_rate=reserve,
        original_wager_returned=raw.original_wager_returned,
    )


PARSED: Final = 256
"""Paytable texts whose parse is kept (a floor uses a few; each table's event carries its own)."""


def parse_paytable(text: str | bytes, source: str) -> Paytable:
    """Validate one paytable document; ``source`` names it in errors (usually the file path).

    A text parses to the same paytable wherever it comes from, so a valid one is parsed once
    and the one frozen :class:`Paytable` shared (its line memo with it): every table's
    ``table-configured`` event carries its paytables whole, and start-up validates each
    table's when the configuration is loaded, when the journal's state is restored and again
    when it is replayed to check it, which at 1,000 tables was 40 % of start-up
    (docs/benchmarks.md, "Where start-up's time goes"). An invalid text is never kept: it
    is parsed again here to name its ``source``.
    """
    try:
        return _valid(text)
    except PaytableError:
        return _parse(text, source)


@functools.lru_cache(maxsize=PARSED)
def _valid(text: str | bytes) -> Paytable:
    return _parse(text, "(paytable)")


def _parse(text: str | bytes, source: str) -> Paytable:
    try:
        raw = msgspec.toml.decode(text, type=_RawPaytable)
    except msgspec.ValidationError as error:
        key, reason = _key_of(error)
        raise PaytableError(source, key, reason) from error
    except msgspec.DecodeError as error:
        raise PaytableError(source, "(file)", f"not valid TOML: {error}") from error
    if not NAME.match(raw.name):
        raise PaytableError(source, "name", "use lowercase letters, digits and single hyphens")
    try:
        wager = Wager(raw.wager)
    except ValueError as error:
        choices = ", ".join(wager.value for wager in Wager)
        raise PaytableError(
            source, "wager", f"unknown wager {raw.wager!r}; one of {choices}"
        ) from error
    try:
        joker = JokerMode(raw.joker)
    except ValueError as error:
        raise PaytableError(
            source, "joker", f"unknown joker mode {raw.joker!r}; semi-wild or fully-wild"
        ) from error
    if wager is Wager.INSURANCE and joker is not JokerMode.SEMI_WILD:
        raise PaytableError(
            source,
            "joker",
            "the insurance wager ranks the joker as an ace (N.J.A.C. 13:69F-11.2(h)); "
            "write semi-wild",
        )
    if not raw.lines:
        raise PaytableError(source, "lines", "a paytable has at least one line")
    rows = [_line(source, index, row, wager) for index, row in enumerate(raw.lines)]
    seen: set[Line] = set()
    for index, row in enumerate(rows):
        if row.line in seen:
            raise PaytableError(source, f"lines[{index}].line", f"{row.line} is listed twice")
        seen.add(row.line)
    _check_order(source, rows)
    if (wager is Wager.PROGRESSIVE) != (raw.progressive is not None):
        reason = "required for" if wager is Wager.PROGRESSIVE else "only for"
        raise PaytableError(
            source, "progressive", f"the [progressive] table is {reason} progressive paytables"
        )
    terms = _progressive(source, raw.progressive) if raw.progressive is not None else None
    if terms is not None:
        check_levels(source, rows, terms)
    return Paytable(
        raw.name, raw.title, wager, raw.source, joker, tuple(rows), terms, sample=raw.sample
    )


def load_paytable_file(path: Path) -> Paytable:
    """Load and validate a paytable file; its ``name`` must match the file's stem."""
    try:
        text = path.read_bytes()
    except OSError as error:
        raise PaytableError(str(path), "(file)", f"cannot read: {error.strerror}") from error
    paytable = parse_paytable(text, str(path))
    if paytable.name != path.stem:
        raise PaytableError(str(path), "name", f"{paytable.name!r} does not match the file name")
    return paytable


def seed_paytables() -> dict[str, Paytable]:
    """Every paytable of the regulations shipped with the controller, by name, in seed order."""
    return _shipped(resources.files("controller") / "paytables", "controller/paytables")


def sample_paytables() -> dict[str, Paytable]:
    """The samples shipped for wagers whose regulation prints no pays (docs/paytables.md).

    Each says ``sample = true``; an operator files their own paytable for such a wager.
    """
    folder = resources.files("controller") / "paytables" / SAMPLES
    return _shipped(folder, f"controller/paytables/{SAMPLES}", sample=True)


def _shipped(folder: Traversable, where: str, *, sample: bool = False) -> dict[str, Paytable]:
    tables = {}
    for entry in sorted(folder.iterdir(), key=lambda item: _seed_order(item.name)):
        if entry.name.endswith(".toml"):
            paytable = parse_paytable(entry.read_bytes(), f"{where}/{entry.name}")
            if paytable.name in tables or paytable.name != entry.name.removesuffix(".toml"):
                raise PaytableError(paytable.name, "name", "must match its file name, once")
            if paytable.sample is not sample or ("sample" in paytable.name) is not sample:
                wanted = "is a sample: say sample = true" if sample else "is no sample"
                raise PaytableError(f"{where}/{entry.name}", "sample", f"a file here {wanted}")
            tables[paytable.name] = paytable
    return tables


_FAMILY_ORDER: Final = ("ace-high", "fortune", "progressive")


def _seed_order(filename: str) -> tuple[int, int, str]:
    stem = filename.removesuffix(".toml")
    family, _, number = stem.rpartition("-")
    rank = _FAMILY_ORDER.index(family) if family in _FAMILY_ORDER else len(_FAMILY_ORDER)
    return rank, int(number) if number.isdigit() else 0, stem


def find_paytable(name_or_path: str) -> Paytable:
    """A seed paytable by name, or a paytable file by path (anything ending in ``.toml``)."""
    if name_or_path.endswith(".toml"):
        return load_paytable_file(Path(name_or_path))
    tables = seed_paytables() | sample_paytables()
    try:
        return tables[name_or_path]
    except KeyError as error:
        known = ", ".join(tables)
        raise PaytableError(name_or_path, "(name)", f"no such paytable; known: {known}") from error
