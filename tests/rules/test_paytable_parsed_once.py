"""A paytable's text is parsed once however many tables carry it (docs/benchmarks.md).

Every table's ``table-configured`` event carries its paytables whole (controller/ledger/
table_rules.py), and start-up validates each table's three times; at 1,000 tables that parse
was 40 % of start-up. The same text gives the one frozen paytable; an invalid text is refused
each time, naming where it came from, and is never kept.
"""

from __future__ import annotations

from importlib import resources

import pytest

from controller.rules.paytable_files import PaytableError, parse_paytable


def _text(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text("utf-8")


def test_the_same_text_gives_the_same_paytable_wherever_it_comes_from() -> None:
    text = _text("progressive-1")
    first = parse_paytable(text, "table t1 paytable progressive-1")
    again = parse_paytable(text, "table t2 paytable progressive-1")
    assert again is first
    assert parse_paytable(text.encode(), "bytes") == first


def test_an_invalid_text_names_each_source_that_gave_it() -> None:
    text = _text("progressive-1").replace('wager = "progressive"', 'wager = "roulette"')
    for source in ("table t1 paytable progressive-1", "table t2 paytable progressive-1"):
        with pytest.raises(PaytableError) as refused:
            parse_paytable(text, source)
        assert refused.value.source == source
        assert refused.value.key == "wager"
