"""Every ``jackpotd`` command, given bad input, says so in a line and exits 1 or 2, never a trace.

The commands are found by walking the argparse tree (:func:`controller.cli.build_parser`), so a
command added later is tested too. Each is run in a child process, as a user runs it, with:

* every file it takes missing, under a "folder" that is a regular file (even root cannot create
  it), and the journal there too;
* every file it takes, the journal included, an SQLite file that is not a journal;
* every file it takes a file that is not SQLite at all;
* an option it does not know (a usage error);
* one bad value at a time for each option whose value is checked (a choice, a number, a port,
  a log level, a date, an amount).

Bad input exits 1 (a one-line ``jackpotd: ...`` on stderr) and a usage error exits 2; nothing is
ever created where the missing files were, and the SQLite file that is not a journal is left
byte for byte as it was, whichever command was given it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from controller.cli import build_parser

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
WAIT_S: Final = 60

FILES: Final = frozenset({
    "anchor", "config", "controller_key", "db", "events", "key", "key_file", "out",
    "passphrase_file", "path", "plot", "public_key", "public_out", "to",
})  # fmt: skip
"""Options and arguments that name a file."""

BAD_VALUES: Final = {
    "log_level": "LOUD",
    "port": "99999",
    "rounds": "-3",
    "tables": "0",
    "interval": "0",
    "limit": "-1",
    "start": "yesterday",
    "end": "2026-13-45",
    "since": "last tuesday",
    "amount": "lots",
    "meter": "lots",
}
"""A bad value for each option whose value is checked beyond being a string."""

EXTRA: Final[dict[tuple[str, ...], tuple[str, ...]]] = {
    ("demo",): ("--rounds", "1", "--interval", "0.01")
}
"""What keeps a command short should the bad input be taken (it would then fail the test)."""


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command of the tree: its words and its parser."""
    if parser.get_default("run") is not None:
        yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, (*path, name))


COMMANDS: Final = dict(commands(build_parser()))


def values(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        action
        for action in parser._actions
        if action.nargs != 0 and not isinstance(action, argparse._SubParsersAction)
    ]


def argv(parser: argparse.ArgumentParser, file: Path, *, every_file: bool) -> list[str]:
    """The command's arguments: each required one given, each file ``file``."""
    words: list[str] = []
    for action in values(parser):
        is_file = action.dest in FILES
        if not (action.required or (every_file and is_file)):
            continue
        value = str(file) if is_file else "bogus"
        words += [action.option_strings[0], value] if action.option_strings else [value]
    return words


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bad-input")
    not_a_folder = folder / "a-regular-file"
    not_a_folder.write_text("not a folder\n")
    unrelated = folder / "inventory.db"
    with closing(sqlite3.connect(unrelated)) as connection, connection:
        connection.execute("CREATE TABLE chips (colour TEXT, cents INTEGER)")
        connection.execute("INSERT INTO chips VALUES ('red', 500)")
    garbage = folder / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 8)
    return {"missing": not_a_folder / "x", "unrelated": unrelated, "garbage": garbage}


def runs(words: tuple[str, ...], bad_files: dict[str, Path]) -> dict[str, list[str]]:
    """Each bad input for one command, by what is bad about it."""
    parser = COMMANDS[words]
    extra = list(EXTRA.get(words, ()))
    cases: dict[str, list[str]] = {}
    for name, file in bad_files.items():
        given = argv(parser, file, every_file=True)
        if any(str(file) in word for word in given):  # the command takes a file
            cases[f"{name} file"] = [*words, *given, *extra]
    required = argv(parser, bad_files["missing"], every_file=False)
    cases["unknown option"] = [*words, *required, "--no-such-option"]
    for action in values(parser):
        checked = action.choices or (action.type and action.dest not in FILES)
        bad = BAD_VALUES.get(action.dest, "bogus" if checked else None)
        if bad is not None and not action.required and action.option_strings:
            cases[f"{action.dest} {bad}"] = [
                *words, *required, action.option_strings[0], bad, *extra
            ]  # fmt: skip
    return cases


def start(arguments: list[str], cwd: Path, environment: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "controller", *arguments],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=cwd, env=environment | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_bad_input_is_one_line_and_exit_1_or_2_never_a_traceback(
    words: tuple[str, ...], bad_files: dict[str, Path], tmp_path: Path
) -> None:
    before = digest(bad_files["unrelated"])
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("JACKPOTD")
    }
    # A child of its own for each case, all at once: the interpreter's start is most of the time.
    started = {
        case: start(arguments, tmp_path, environment)
        for case, arguments in runs(words, bad_files).items()
    }
    for case, child in started.items():
        try:
            _, err = child.communicate(timeout=WAIT_S)
        finally:
            child.kill()
        where = f"jackpotd {' '.join(words)}, {case}: exit {child.returncode}\n{err}"
        assert "Traceback" not in err, where
        assert "Exception Group" not in err, where
        assert child.returncode in {1, 2}, where
        if child.returncode == 1:
            assert any(line.startswith("jackpotd: ") for line in err.splitlines()), where
        else:
            assert "usage: jackpotd" in err, where
    assert digest(bad_files["unrelated"]) == before
    assert not bad_files["missing"].exists()
    assert sorted(path.name for path in bad_files["unrelated"].parent.iterdir()) == [
        "a-regular-file", "garbage.bin", "inventory.db",
    ]  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_every_command_is_walked() -> None:
    walked = {" ".join(words) for words in COMMANDS}
    assert {"meters", "hits", "report", "verify", "demo", "run", "apply", "key show"} <= walked
    assert "operator" not in walked  # a group of commands, not a command
