"""Every command's help: each option explained, with its default; choices; examples.

An enumeration's value is one of its choices, which the help lists; examples follow the
options. The commands are found by walking the argparse tree, as
tests/cli/test_cli_bad_input.py does.
"""

from __future__ import annotations

import argparse
from typing import Final

import pytest

from controller.cli import build_parser

ENUMERATIONS: Final = {
    ("run", "log_level"): ["DEBUG", "INFO", "WARNING", "ERROR"],
    ("demo", "log_level"): ["DEBUG", "INFO", "WARNING", "ERROR"],
    ("hits", "kind"): [
        "jackpot", "progressive", "bonus", "ace-high", "insurance", "dynasty", "envy", "all",
    ],
    ("adjust", "account"): ["meter", "reserve", "overflow"],
    ("operator add", "role"): ["supervisor", "manager"],
    ("hand", "ace_five"): ["second-highest", "lowest"],
}  # fmt: skip
"""Options whose value is one of a few words: argparse checks them and the help lists them."""


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the tree below the top, commands and groups of commands alike."""
    found = [(" ".join(path), parser)] if path else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += parsers(child, (*path, name))
    return found


PARSERS: Final = dict(parsers(build_parser()))


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
    ]


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_option_is_explained_with_its_default_and_examples_follow(name: str) -> None:
    parser = PARSERS[name]
    text = parser.format_help()
    assert parser.epilog is not None, name
    assert parser.epilog.startswith("examples:\n"), name
    examples = parser.epilog.splitlines()[1:]
    assert examples, name
    assert all("jackpotd " in line for line in examples if not line.startswith("   ")), name
    for action in options(parser):
        assert action.help, (name, action.dest)
        if action.default not in (None, False, [], argparse.SUPPRESS) and (action.option_strings):
            assert f"(default: {action.default})" in " ".join(text.split()), (name, action.dest)
    assert "(default: None)" not in text


def test_the_journal_option_says_how_it_is_found_without_it() -> None:
    text = " ".join(PARSERS["meters"].format_help().split())
    assert (
        "--db FILE the journal file, or a postgresql:// URL (default: the journal of --config, "
        "else $JACKPOTD_DB" in text
    )
    assert "--config FILE the configuration whose journal to open" in text


@pytest.mark.parametrize(("where", "choices"), ENUMERATIONS.items(), ids=str)
def test_an_enumeration_takes_only_its_choices(where: tuple[str, str], choices: list[str]) -> None:
    command, dest = where
    (action,) = [action for action in options(PARSERS[command]) if action.dest == dest]
    assert list(action.choices or ()) == choices
    assert "{" + ",".join(choices) + "}" in PARSERS[command].format_help()
