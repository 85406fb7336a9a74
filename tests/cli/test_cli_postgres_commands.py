"""Every command on a PostgreSQL journal does what it does on the SQLite file of the same history.

The history is one site's (tests/support/journal/twin_journals.py), journaled event for event into
an SQLite file and into a database of the test's own PostgreSQL server: signed operators, an
approved configuration, jackpots pending and verified, an adjustment, a refused unsigned
event, a signed checkpoint. Each command then runs on both, in process, and must print the
same (the journal's name and new events' ids aside) and exit the same.

Read-only commands open the database in one read-only transaction and never create or
migrate a table: every table's rows are as they were after all of them. A database that is
not a journal, or holds no journal, is refused in one line and left as it was. Commands that
append go through the ledger's authority checks there as in the file: what the file refuses
(unsigned privileged events, one supervisor where two must sign, guessed passphrases, a
supervisor approving a configuration), the database refuses and journals too.
"""

from __future__ import annotations

import gzip
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psycopg
import pytest
from psycopg.errors import ReadOnlySqlTransaction
from support.journal.twin_journals import (
    AT,
    NOTHING,
    PENDING,
    Twins,
    database_fingerprint,
    played,
    same_output,
    site_history,
    write_config,
)
from support.ledger.approvals import PASSPHRASE

from controller.cli import main
from controller.clock import utc_now
from controller.events import HitVerified, MeterAdjusted, OperatorEnrolled, encode_event
from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import PostgresReader

if TYPE_CHECKING:
    from pathlib import Path

    from support.journal.postgres import PostgresServer
    from support.ledger.approvals import Site

    from controller.events import AnyEvent
    from controller.security.controller_key import ControllerKey


@dataclass
class Pair:
    """The same history in a file and a database; runs a command on each."""

    file: Path
    url: str
    config: Path
    folder: Path
    site: Site[Twins]
    capsys: pytest.CaptureFixture[str]

    def key(self, name: str) -> str:
        """``name``'s key file."""
        return str(self.folder / f"{name}.key")

    def run(self, location: str, *argv: str) -> tuple[int, str, str]:
        """``jackpotd ARGV --db LOCATION``, its output made comparable (``same_output``)."""
        status = main([*argv, "--db", location])
        captured = self.capsys.readouterr()
        return status, same_output(captured.out, location), same_output(captured.err, location)

    def both(self, *argv: str) -> tuple[int, str, str]:
        """The command on the file and on the database; they must agree; what they said."""
        on_file = self.run(str(self.file), *argv)
        on_database = self.run(self.url, *argv)
        assert on_database == on_file, argv
        return on_file

    def each(self, *argv: str) -> list[tuple[int, str, str]]:
        """The command on the file and on the database, whatever each said."""
        return [self.run(location, *argv) for location in (str(self.file), self.url)]

    def feed(self, *events: AnyEvent) -> str:
        """A JSON-lines file of ``events``, for ``jackpotd apply``."""
        path = self.folder / f"feed-{uuid.uuid4().hex[:8]}.jsonl"
        path.write_bytes(b"\n".join(encode_event(event) for event in events))
        return str(path)


@pytest.fixture
def pair(
    tmp_path: Path,
    postgres_url: str,
    key: ControllerKey,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Pair:
    config = write_config(tmp_path)
    twins = Twins.open(tmp_path / "journal.db", postgres_url)
    try:
        site = site_history(twins, config, key)
    finally:
        twins.close()
    for name in site.keys:
        site.key_file(name, tmp_path)
    (tmp_path / "controller.pub").write_text(key.public_key + "\n")
    for variable in ("JACKPOTD_PASSPHRASE", "JACKPOTD_PASSPHRASE_1", "JACKPOTD_PASSPHRASE_2"):
        monkeypatch.setenv(variable, PASSPHRASE)
    monkeypatch.delenv("JACKPOTD_DB", raising=False)
    return Pair(tmp_path / "journal.db", postgres_url, config, tmp_path, site, capsys)


def read_only_commands(pair: Pair) -> list[tuple[tuple[str, ...], int]]:
    """Each reading command, and the status it must exit with on this history."""
    return [
        (("meters",), 0),
        (("meters", "--json"), 0),
        (("hits",), 0),
        (("hits", "--json"), 0),
        (("hits", "--pending"), 0),
        (("hits", "--pending", "--json"), 0),
        (("hits", "--kind", "all"), 0),
        (("hits", "--kind", "all", "--since", "2026-11-30"), 0),
        (("hits", "--kind", "progressive", "--limit", "1", "--json"), 0),
        (("hits", "--kind", "envy"), 0),
        (("report",), 0),
        (("report", "--json"), 0),
        (("report", "--from", "2026-11-30", "--json"), 0),
        (("verify",), 0),
        (("verify", "--json", "--controller-key", str(pair.folder / "controller.pub")), 0),
        (("operator", "list"), 0),
        (("manifest", "check", "--config", str(pair.config)), 1),
        (("config", "approve", "--config", str(pair.config), "--dry-run", "--key", "k"), 0),
    ]


def test_every_reading_command_prints_the_same_and_leaves_the_database_as_it_was(
    pair: Pair,
) -> None:
    before = database_fingerprint(pair.url)
    for argv, expected in read_only_commands(pair):
        status, out, err = pair.both(*argv)
        assert status == expected, (argv, err)
        assert "Traceback" not in err
    assert database_fingerprint(pair.url) == before
    # What they printed is this history's, not an empty journal's.
    status, out, _ = pair.both("hits", "--pending")
    assert PENDING in out
    assert "1,000.02" in out
    pools = json.loads(pair.both("meters", "--json")[1])["pools"]
    assert (pools[0]["hits"], pools[0]["adjustments_cents"]) == (2, 1_234)
    verified = json.loads(pair.both("verify", "--json")[1])
    assert (verified["ok"], verified["checkpoints"]) == (True, 1)


def test_a_reading_command_runs_in_a_read_only_transaction_the_server_enforces(
    pair: Pair,
) -> None:
    before = database_fingerprint(pair.url)
    with PostgresReader(DatabaseUrl(pair.url)) as reader:
        assert reader.state.pools["P1"].hits_count == 2
        with pytest.raises(ReadOnlySqlTransaction):
            reader._connection.execute("DELETE FROM payouts")
    assert database_fingerprint(pair.url) == before


def test_anchor_save_on_the_database_saves_the_head_the_file_saves(pair: Pair) -> None:
    heads = []
    for location, name in ((str(pair.file), "file"), (pair.url, "database")):
        anchors = pair.folder / f"{name}.anchors"
        status, out, err = pair.run(location, "anchor", "save", "--to", str(anchors), "--json")
        assert status == 0, err
        heads.append({k: v for k, v in json.loads(out).items() if k != "saved"})
        status, _, err = pair.run(location, "verify", "--anchor", str(anchors))
        assert status == 0, err
    assert heads[0] == heads[1]
    assert heads[0]["seq"] == 16


def test_supervisors_commands_append_to_the_database_as_to_the_file(pair: Pair) -> None:
    status, out, err = pair.both("verify-hit", PENDING, "--key", pair.key("sup1"))
    assert (status, err) == (0, "")
    assert out == "journaled as row 17 (verify-UUID)\n"
    adjust = ("adjust", "P1", "--amount", "+$2.50", "--reason", "sign test")
    status, out, err = pair.both(*adjust, "--key", pair.key("sup1"), "--key", pair.key("sup2"))
    assert (status, out) == (0, "journaled as row 18 (adjust-UUID)\n"), err
    status, out, err = pair.both(
        "void", "T1", "R9", "--reason", "misdeal", "--key", pair.key("sup1")
    )
    assert status == 1
    assert "row 19" in err
    enrolled = ("operator", "add", "sup1", "--role", "supervisor", "--public-key")
    assert pair.both(*enrolled, pair.key("sup1"), "--key", pair.key("mgr"))[0] == 1
    status, _, err = pair.both(
        "operator", "revoke", "sup2", "--reason", "left", "--key", pair.key("mgr")
    )
    assert status == 0, err
    status, _, err = pair.both(
        "manifest", "approve", "--config", str(pair.config), "--key", pair.key("mgr")
    )
    assert status == 0, err
    for _, _, err in pair.each("manifest", "check", "--config", str(pair.config)):
        assert "no manifest has been approved" not in err  # journaled (matching: files may move)
    status, out, _ = pair.both("apply", pair.feed(*played("R5", NOTHING)))
    assert status == 1  # unsigned wagers, where authority is signed
    assert out == "2 events, 2 refused\n"
    for argv in (("meters", "--json"), ("hits", "--kind", "all"), ("operator", "list")):
        pair.both(*argv)
    for status, out, _ in pair.each("verify", "--json"):  # rows 17 to 24 differ: ids, times
        assert (status, json.loads(out)["ok"], json.loads(out)["rows"]) == (0, True, 24)


def test_what_the_ledger_refuses_in_the_file_it_refuses_in_the_database(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    forged = OperatorEnrolled(
        "o-1", AT, "eve", "manager", "", "", "ed25519", "mgr", public_key="x" * 43
    )
    attacks = pair.feed(
        MeterAdjusted("a-9", AT, "P1", "reserve", 5_000_000, "sup1", "x"),
        HitVerified("v-9", AT, PENDING, "sup1"),
        forged,
        pair.site.sign(  # dated now: at a live append the window must hold the clock
            MeterAdjusted("a-10", utc_now(), "P1", "reserve", 5_000_000, "sup1", "x"), "sup1"
        ),
    )
    status, out, err = pair.both("apply", attacks)
    assert (status, out) == (1, "4 events, 4 refused\n")
    assert "unsigned" in err
    assert "dual control" in err
    # One supervisor alone for an adjustment: dual control.
    adjust = ("adjust", "P1", "--amount", "+$1", "--reason", "x", "--key", pair.key("sup1"))
    status, _, err = pair.both(*adjust)
    assert status == 1
    assert "dual control" in err
    # A supervisor enrolling a manager.
    enroll = ("operator", "add", "eve", "--role", "manager", "--public-key", pair.key("eve"))
    pair.site.keys["eve"] = pair.site.keys["mgr"]
    pair.site.key_file("eve", pair.folder)
    status, _, err = pair.both(*enroll, "--key", pair.key("sup1"))
    assert status == 1
    assert "sup1 (supervisor) may not enroll" in err
    # Guessed passphrases lock the operator out, in the database as in the file.
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", "a guess")
    for _ in range(3):
        status, _, err = pair.both("verify-hit", PENDING, "--key", pair.key("sup1"))
        assert status == 1
        assert "wrong passphrase for sup1" in err
    for _, listing, _ in pair.each("operator", "list"):  # each until its own failure's time
        listed = {line.split("\t")[0]: line for line in listing.splitlines()}
        assert "\tLOCKED OUT until " in listed["sup1"]
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    for status, _, err in pair.each("verify-hit", PENDING, "--key", pair.key("sup1")):
        assert status == 1
        assert "locked out" in err
    assert PENDING in pair.both("hits", "--pending")[1]
    pair.both("meters", "--json")
    assert all(json.loads(out)["ok"] for _, out, _ in pair.each("verify", "--json"))


def test_a_database_that_is_not_a_journal_is_refused_by_every_command_and_left_as_it_was(
    pair: Pair,
) -> None:
    with psycopg.connect(pair.url, autocommit=True) as admin:
        admin.execute("DROP SCHEMA public CASCADE")
        admin.execute("CREATE SCHEMA public")
        admin.execute("CREATE TABLE chips (colour TEXT, cents INTEGER)")
        admin.execute("INSERT INTO chips VALUES ('red', 500)")
    before = database_fingerprint(pair.url)
    shown = pair.url
    refusal = f"jackpotd: {shown}: not a jackpotd journal (the database holds chips)\n"
    for argv, _ in read_only_commands(pair):
        if argv[0] == "config":
            continue
        assert pair.run(pair.url, *argv) == (1, "", same_output(refusal, shown)), argv
    feed = pair.feed(*played("R1", NOTHING))
    assert pair.run(pair.url, "apply", feed) == (1, "", same_output(refusal, shown))
    assert pair.run(pair.url, "verify-hit", PENDING, "--key", pair.key("sup1"))[0] == 1
    assert database_fingerprint(pair.url) == before


def test_an_empty_database_is_no_journal_to_a_reader_and_is_made_one_by_apply(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (("meters",), ("hits",), ("report",), ("verify",), ("operator", "list")):
        status, out, err = main([*argv, "--db", postgres_url]), *capsys.readouterr()
        assert (status, out) == (1, ""), argv
        assert err == (
            f"jackpotd: {postgres_url}: no such journal (the database holds no journal tables)\n"
        )
    status = main(["verify-hit", PENDING, "--db", postgres_url, "--key", "k.key"])
    assert (status, capsys.readouterr().err) == (1, err)  # a command that needs a journal
    assert database_fingerprint(postgres_url) == {}
    feed = tmp_path / "events.jsonl"
    feed.write_bytes(b"\n".join(encode_event(event) for event in played("R1", ["2c"] * 7)))
    assert main(["apply", str(feed), "--db", postgres_url]) == 1  # no such table: refused
    assert capsys.readouterr().out == "2 events, 2 refused\n"
    assert main(["verify", "--db", postgres_url]) == 0
    assert "journal OK: 2 rows" in capsys.readouterr().out


def test_archive_on_the_database_writes_the_file_s_segment_and_verify_archives_reads_it(
    pair: Pair,
) -> None:
    """``jackpotd archive`` and ``verify --archives`` as an operator runs them (docs/ha.md)."""
    public = str(pair.folder / "controller.pub")
    said, folders = [], []
    for location, name in ((str(pair.file), "file"), (pair.url, "database")):
        archive = pair.folder / f"{name}-archive"
        argv = ("archive", "--rows", "20", "--out", str(archive), "--controller-key", public)
        status, text, err = pair.run(location, *argv)
        assert status == 0, err
        said.append(text.replace(str(archive), "OUT"))
        folders.append(archive)
    assert said[0] == said[1]
    assert "archived rows 1 to 13 (13 rows)" in said[0]
    assert "signed by the checkpoint at row 14" in said[0]
    assert "the live journal continues at row 14" in said[0]
    (on_file,), (on_database,) = (sorted(folder.iterdir()) for folder in folders)
    assert on_file.name == on_database.name
    assert on_file.read_bytes() == on_database.read_bytes()

    checked = [
        pair.run(location, "verify", "--archives", str(folder), "--controller-key", public)
        for location, folder in zip((str(pair.file), pair.url), folders, strict=True)
    ]
    assert checked[0] == checked[1]
    status, out, _ = checked[0]
    assert status == 0
    assert "archived: rows 1 to 13 in 1 segment, verified with the journal" in out
    # Without the folder: verified from the recorded cut, and said so.
    status, out, _ = pair.both("verify", "--json")
    assert status == 0
    assert json.loads(out)["archived"] == {"rows": 13, "segments": 1, "verified": False}

    # A row dropped from the segment by whoever can write the archive folder fails on both.
    for segment in (on_file, on_database):
        with gzip.open(segment, "rb") as file:
            lines = file.read().splitlines(keepends=True)
        del lines[3]
        with gzip.open(segment, "wb") as file:
            file.writelines(lines)
    failed = [
        pair.run(location, "verify", "--archives", str(folder))
        for location, folder in zip((str(pair.file), pair.url), folders, strict=True)
    ]
    assert failed[0] == failed[1]
    status, _, err = failed[0]
    assert status == 1
    assert f"segment {on_file.name}: its SHA-256 is not the one recorded" in err


def test_archive_refuses_an_empty_database_and_a_journal_that_does_not_verify(
    pair: Pair, postgres_server: PostgresServer
) -> None:
    empty = postgres_server.url(postgres_server.create_database())
    out = pair.folder / "archive"
    status, text, err = pair.run(empty, "archive", "--rows", "5", "--out", str(out))
    assert (status, text) == (1, "")
    assert err == "jackpotd: JOURNAL: no such journal (the database holds no journal tables)\n"
    assert database_fingerprint(empty) == {}
    with psycopg.connect(pair.url, autocommit=True) as admin:
        admin.execute(
            "UPDATE payouts SET win_cents = win_cents + 100 WHERE payout_id = %s", [PENDING]
        )
    before = database_fingerprint(pair.url)
    status, text, err = pair.run(pair.url, "archive", "--rows", "20", "--out", str(out))
    assert (status, text) == (1, "")
    assert "the journal does not verify" in err
    assert "nothing archived" in err
    assert database_fingerprint(pair.url) == before
    assert not out.exists()


def test_a_reader_never_migrates_a_journal_of_an_older_schema(pair: Pair) -> None:
    with psycopg.connect(pair.url, autocommit=True) as admin:
        admin.execute("UPDATE journal_schema SET version = version - 1")
        (version,) = admin.execute("SELECT version FROM journal_schema").fetchone() or (0,)
    before = database_fingerprint(pair.url)
    status, out, err = pair.run(pair.url, "meters")
    assert (status, out) == (1, "")
    assert err == (
        f"jackpotd: JOURNAL: the journal is at schema version {version}, this controller reads "
        f"{version + 1}; the service brings it up to date when it starts\n"
    )
    assert database_fingerprint(pair.url) == before
