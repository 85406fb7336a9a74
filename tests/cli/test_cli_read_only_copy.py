"""A journal copy in a folder nobody may write reads and verifies, and nothing is written.

docs/operations.md, "Read-only copies": a lab or an auditor given a copy, or a backup on
read-only media, runs the commands that only read (``verify``, ``meters``, ``hits``,
``report``, ``operator list``, ``manifest check``, ``anchor save``) on it. They used to fail
with "attempt to write a readonly database", SQLite wanting to make the WAL's ``-shm`` beside
the file. The copy here is in a folder at 0555, the file at 0444, and the commands run as a
real user of the system who is neither the owner nor root (``nobody``, through ``setpriv``,
when the tests run as root; as the tests' own user otherwise): they succeed, and the folder
holds the journal alone, its bytes unchanged. Run as root too, to whom the modes are no bar,
they still make no ``-wal`` or ``-shm``: a journal with no rows in a WAL is read immutable
(controller/journal/sqlite/read_only_file.py).

A copy whose ``-wal`` holds rows is read through its ``-shm`` when it came with one, and
refused in words saying why when it did not; a folder given as the journal is named as one;
a file a writer changes under an immutable read is refused, not shown half old, half new.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.deploy.software_rig import write_config
from support.journal.journal_rig import opened_journal, play_rounds, wager

from controller.journal.errors import JournalError
from controller.journal.sqlite import verify as verifying
from controller.journal.sqlite.read_only_file import open_read_only
from controller.ledger_journal.sqlite import Journal, ReadOnlyJournal
from controller.ledger_journal.sqlite import verify as verify_file

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "operations.md"
DOCUMENTED = "/mnt/audit"
"""The folder of the copy in docs/operations.md's commands; the test's own copy stands in."""
NOBODY = 65534
WAIT_S = 120
READ_ONLY_DIR = 0o555
READ_ONLY_FILE = 0o444


RUNNER = """
import contextlib, io, json, sys
from controller.cli import main
ran = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    ran.append((status, out.getvalue(), err.getvalue()))
print(json.dumps(ran))
"""
"""``jackpotd``'s commands, one after the other in one process (each starts in seconds)."""


@dataclass(frozen=True, slots=True)
class Ran:
    """A command's exit status and what it printed."""

    status: int
    out: str
    err: str


def as_reader(*commands: Sequence[str]) -> list[Ran]:
    """``jackpotd`` run with each of ``commands`` by a user who may not write the copy.

    That user is ``nobody`` when the tests run as root (see the module docstring), the
    tests' own user otherwise; the commands run in one child process, through ``main``.
    """
    drop = (
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if os.geteuid() == 0
        else []
    )
    done = subprocess.run(
        [*drop, sys.executable, "-c", RUNNER, json.dumps([list(argv) for argv in commands])],
        capture_output=True, text=True, timeout=WAIT_S, check=False, stdin=subprocess.DEVNULL,
        env=os.environ | {"PYTHONPATH": str(ROOT), "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [Ran(*ran) for ran in json.loads(done.stdout)]


def listing(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` and its sha256."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in folder.iterdir()}


@pytest.fixture
def shelf() -> Iterator[Path]:
    """A folder every user may enter (pytest's own is its user's alone), emptied afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="jackpotd-copy-"))
    folder.chmod(0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)  # a folder at 0555 cannot be emptied by its owner
    shutil.rmtree(folder)


def read_only_copy(journal: Path, folder: Path, *companions: str) -> Path:
    """``journal`` (and its ``-wal``/``-shm``, if named) copied into ``folder``, made read only."""
    folder.mkdir()
    for suffix in ("", *companions):
        source = journal.with_name(journal.name + suffix)
        shutil.copy2(source, folder / source.name)
        (folder / source.name).chmod(READ_ONLY_FILE)
    folder.chmod(READ_ONLY_DIR)
    return folder / journal.name


@pytest.fixture
def copy(shelf: Path) -> Path:
    """A closed journal of three rounds, copied to a read-only folder on the shelf."""
    original = shelf / "live" / "journal.db"
    original.parent.mkdir()
    with opened_journal(original) as journal:
        play_rounds(journal)
    assert not original.with_name("journal.db-wal").exists()  # closed: every row in the file
    return read_only_copy(original, shelf / "copy")


def reading_commands(shelf: Path, *, every_form: bool = False) -> list[tuple[str, ...]]:
    """Each command that only reads the journal (``every_form``: with ``--json`` and the rest).

    ``anchor save`` writes its anchors file only, in a folder of the reader's own.
    """
    out = shelf / "out"
    out.mkdir(exist_ok=True)
    out.chmod(0o777)
    config = write_config(shelf)
    commands = [
        ("verify",), ("meters",), ("hits", "--pending"), ("report",), ("operator", "list"),
        ("manifest", "check", "--config", str(config)),
        ("anchor", "save", "--to", str(out / "anchors.jsonl")),
    ]  # fmt: skip
    if every_form:
        commands += [
            ("verify", "--json"), ("meters", "--json"), ("hits",),
            ("hits", "--kind", "all", "--json"), ("report", "--json"), ("report", "sites"),
        ]  # fmt: skip
    return commands


def test_every_read_only_command_reads_a_copy_in_a_folder_nobody_may_write(
    copy: Path, shelf: Path
) -> None:
    before = listing(copy.parent)
    commands = [(*argv, "--db", str(copy)) for argv in reading_commands(shelf)]
    for argv, done in zip(commands, as_reader(*commands), strict=True):
        assert "cannot read the journal" not in done.err, (argv, done.err)
        assert "Traceback" not in done.err, (argv, done.err)
        if argv[0] != "manifest":  # nothing was ever approved in this journal: it says so
            assert done.status == 0, (argv, done.err)
    assert listing(copy.parent) == before  # no -wal, no -shm, the bytes as they were
    verified, pending = as_reader(
        ("verify", "--json", "--db", str(copy)), ("hits", "--pending", "--db", str(copy))
    )
    assert json.loads(verified.out)["ok"] is True
    assert json.loads(verified.out)["rows"] == 11
    assert "r3-settle/1/progressive" in pending.out
    assert (shelf / "out" / "anchors.jsonl").exists()
    assert listing(copy.parent) == before


def test_root_reading_the_copy_makes_no_wal_or_shm_either(
    copy: Path, shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = listing(copy.parent)
    for argv in reading_commands(shelf, every_form=True):
        status, _, err = run(capsys, *argv, "--db", str(copy))
        assert status in {0, 1}, (argv, err)
        assert "cannot read the journal" not in err, (argv, err)
        assert listing(copy.parent) == before, argv


def test_a_closed_journal_in_a_folder_that_can_be_written_is_left_with_nothing_beside_it(
    copy: Path,
) -> None:
    folder = copy.parent
    folder.chmod(0o777)
    before = listing(folder)
    commands = [
        (*argv, "--db", str(copy)) for argv in (("verify",), ("meters",), ("hits",), ("report",))
    ]
    assert [done.status for done in as_reader(*commands)] == [0, 0, 0, 0]
    assert listing(folder) == before


@pytest.fixture
def with_rows_in_its_wal(shelf: Path) -> Iterator[Path]:
    """A journal whose writer holds it open, its last round still in the ``-wal`` only."""
    original = shelf / "live" / "journal.db"
    original.parent.mkdir()
    with opened_journal(original) as journal:
        play_rounds(journal)
        with closing(sqlite3.connect(original)) as other:
            other.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the rounds so far in the file
        assert journal.append(wager("late-w1", "late", 2)).applied
        assert original.with_name("journal.db-wal").stat().st_size > 0
        yield original


def test_a_copy_with_its_wal_and_shm_reads_the_rows_in_its_wal(
    with_rows_in_its_wal: Path, shelf: Path
) -> None:
    copy = read_only_copy(with_rows_in_its_wal, shelf / "copy", "-wal", "-shm")
    before = listing(copy.parent)
    verified, meters = as_reader(
        ("verify", "--json", "--db", str(copy)), ("meters", "--json", "--db", str(copy))
    )
    assert verified.status == 0, verified.err
    assert json.loads(verified.out)["rows"] == 12  # the wager in the WAL is read
    assert json.loads(meters.out)["pools"][0]["wagers"] == 6
    assert listing(copy.parent) == before


def test_a_copy_with_rows_in_a_wal_but_no_shm_is_refused_saying_why(
    with_rows_in_its_wal: Path, shelf: Path
) -> None:
    copy = read_only_copy(with_rows_in_its_wal, shelf / "copy", "-wal")
    before = listing(copy.parent)
    commands = [(argv, "--db", str(copy)) for argv in ("verify", "meters")]
    for argv, done in zip(commands, as_reader(*commands), strict=True):
        assert done.status == 1, argv
        assert done.err == (
            f"jackpotd: {copy}: cannot read the journal: its -wal holds rows not yet in the "
            f"file, and SQLite reads them only with a -shm beside it, which cannot be made in "
            f"{copy.parent}: copy the journal with its -wal and -shm, or to a folder that can "
            "be written\n"
        ), argv
    assert listing(copy.parent) == before


def test_a_folder_given_as_the_journal_is_named_as_a_folder(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (("meters",), ("verify",), ("hits", "--pending"), ("report",)):
        status, out, err = run(capsys, *argv, "--db", str(shelf))
        assert (status, out, err) == (1, "", f"jackpotd: {shelf}: a folder, not a journal file\n")


def test_a_journal_written_while_read_immutable_is_refused_not_shown(copy: Path) -> None:
    folder = copy.parent
    folder.chmod(0o755)
    copy.chmod(0o644)  # the copy taken back into service while an auditor reads it
    refused = pytest.raises(JournalError, match="changed while it was read")
    with refused, ReadOnlyJournal(copy) as reader:
        assert reader.state.pools["pool-a"].hits_count == 2
        with Journal(copy) as writer:  # its close folds the WAL into the file
            assert writer.append(wager("meanwhile", "r9", 1)).applied
    assert verify_file(copy).ok  # read again, whole


def test_verify_of_a_journal_written_while_read_immutable_is_refused(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy.parent.chmod(0o755)
    copy.chmod(0o644)
    monkeypatch.setattr(verifying, "PROGRESS_ROWS", 1)
    written: list[int] = []

    def write_meanwhile(done: int, total: int) -> None:
        if not written and 0 < done < total:
            with Journal(copy) as writer:
                written.append(writer.append(wager("meanwhile", "r9", 1)).seq)

    with pytest.raises(JournalError, match="changed while it was read"):
        verify_file(copy, progress=write_meanwhile)
    assert written == [12]
    assert verify_file(copy).ok


def test_a_journal_a_writer_holds_open_is_read_through_its_locks_never_immutable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as writer:
        play_rounds(writer)
        opened = open_read_only(path)  # its -wal and -shm beside it
        assert not opened.immutable
        opened.connection.close()
    opened = open_read_only(path)  # closed: its rows all in the file, nothing beside it
    assert opened.immutable
    opened.connection.close()


def documented_commands(folder: Path) -> list[list[str]]:
    """docs/operations.md's commands for a read-only copy, on the copy in ``folder``."""
    section = PAGE.read_text(encoding="utf-8").split("### Read-only copies\n", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)
    commands = [shlex.split(line) for line in block.splitlines()]
    assert all(words[0] == "jackpotd" for words in commands)
    return [[word.replace(DOCUMENTED, str(folder)) for word in words[1:]] for words in commands]


def test_the_documented_commands_read_a_copy_on_read_only_media_as_written(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = shelf / "live" / "journal.db"
    original.parent.mkdir()
    with opened_journal(original) as journal:
        play_rounds(journal)
    anchors = shelf / "live" / "pit-2.anchors"
    assert run(capsys, "anchor", "save", "--to", str(anchors), "--db", str(original))[0] == 0
    copy = read_only_copy(original, shelf / "audit")
    copy.parent.chmod(0o755)
    shutil.copy2(anchors, copy.parent / anchors.name)
    (copy.parent / anchors.name).chmod(READ_ONLY_FILE)  # the auditor's copy, the media's mode
    copy.parent.chmod(READ_ONLY_DIR)
    before = listing(copy.parent)
    commands = documented_commands(copy.parent)
    assert [words[0] for words in commands] == ["verify", "meters", "hits", "report"]
    ran = as_reader(*commands)
    assert [done.status for done in ran] == [0, 0, 0, 0], [done.err for done in ran]
    assert "anchors: 1 saved heads are in the chain" in ran[0].out
    assert "r3-settle/1/progressive" in ran[2].out
    assert listing(copy.parent) == before
