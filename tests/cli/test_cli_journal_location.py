"""``--db`` and ``[controller] journal`` take a ``postgresql://`` URL; no command makes it a file.

Before, ``--db postgresql://host/db`` was a relative path: ``jackpotd apply`` created an SQLite
journal at ``postgresql:/host/db`` and reported success. Every command now opens the database
the URL names (tests/cli/test_cli_postgres_*.py); one that cannot be reached is one line, its
password hidden, and no file is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.config_files import BASE, edited, error_of, load

from controller.journal.location import DatabaseUrl

if TYPE_CHECKING:
    from pathlib import Path

URL = "postgresql://jackpotd:hunter2@127.0.0.1:1/journal"
"""A database nothing listens for: no command may get as far as connecting, nor make a file."""


def _files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.mark.parametrize(
    "argv",
    [
        ["apply", "events.jsonl", "--db", URL],
        ["meters", "--db", URL],
        ["hits", "--db", URL],
        ["report", "--db", URL],
        ["verify-hit", "t/r/1/progressive", "--db", URL, "--key", "k.key"],
        ["anchor", "save", "--db", URL, "--to", "anchors.jsonl"],
        ["archive", "--rows", "5", "--out", "segments", "--db", URL],
    ],
    ids=lambda argv: argv[0],
)
def test_a_postgresql_url_never_becomes_an_sqlite_file_named_postgresql(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "events.jsonl").write_text("")
    status, out, err = run(capsys, *argv)
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("jackpotd: postgresql://jackpotd:***@127.0.0.1:1/journal: ")
    assert "cannot open the journal: connection failed" in err or "not archived" in err
    assert "hunter2" not in err
    assert _files(tmp_path) == ["events.jsonl"]


def test_the_environment_may_name_a_postgresql_journal_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JACKPOTD_DB", URL)
    status, _, err = run(capsys, "meters")
    assert status == 1
    assert err.startswith("jackpotd: postgresql://jackpotd:***@127.0.0.1:1/journal: cannot open")
    assert _files(tmp_path) == []


def test_a_url_of_another_scheme_is_refused_by_the_demo_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        run(capsys, "demo", "--db", "mysql://db/journal", "--rounds", "1")
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert (
        "mysql://...: not a journal location: give an SQLite file's path, a postgresql:// URL "
        "or memory://NAME" in err
    )
    assert _files(tmp_path) == []


def test_the_configured_journal_may_be_a_postgresql_url(tmp_path: Path) -> None:
    text = edited('id = "c1"\n', f'id = "c1"\njournal = "{URL}"\n')
    assert load(tmp_path, text).controller.journal == DatabaseUrl(URL)
    assert "var" not in _files(tmp_path)


def test_a_configured_journal_of_another_scheme_is_an_error_naming_the_key(tmp_path: Path) -> None:
    error = error_of(tmp_path, edited('id = "c1"\n', 'id = "c1"\njournal = "mysql://db/j"\n'))
    assert error.key == "controller.journal"
    assert "not a journal location" in str(error)
    assert BASE  # the rest of the file is the base configuration's
