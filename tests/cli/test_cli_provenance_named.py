"""Every append names its provenance; verify shows it; archive segments carry it.

On the real signed site of tests/cli/test_cli_apply_table_word.py (a manager's signed
configuration approval, a pool and a table):

* an in-process append that names no provenance is never taken for the daemon's intake: a
  forged round appended so is refused whole and journaled as faults, no meter moves;
* every command that appends names itself (``cli config approve``, ``cli operator unlock``...),
  and ``jackpotd verify`` says who wrote the rows;
* a row's provenance edited in the file to make a table's word look like it came from ``apply``
  is named by ``verify`` (the append never journals one);
* ``jackpotd archive`` writes each row's provenance on its line of the segment, sealed by the
  segment's digests, and ``verify --archives`` counts it; a segment written before provenance
  was carried (no such field on its lines) still verifies (docs/journal.md, "Provenance").
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
from typing import TYPE_CHECKING

from support.ledger.apply_floor import Floor, floor, forged_round

from controller.journal.sqlite.rows import provenances
from controller.ledger.screen import NOT_FROM_INTAKE
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["floor"]  # the fixture, used by name
INTAKE = "serial port=/dev/ttyT1 line=T1"


def test_an_unnamed_in_process_append_of_a_devices_input_is_refused(floor: Floor) -> None:
    before, rows_before = floor.meters(), len(floor.rows())
    with Journal(floor.database) as journal:
        receipts = journal.append_many(forged_round())
    assert not any(receipt.applied for receipt in receipts)
    assert all("from a writer that did not name itself: refused" in r.reason for r in receipts)
    assert floor.meters() == before
    assert all(NOT_FROM_INTAKE in str(row["event"]) for row in floor.rows()[rows_before:])


def test_every_command_names_itself_and_verify_says_who_wrote_the_rows(floor: Floor) -> None:
    with Journal(floor.database) as journal:
        named = dict(provenances(journal.db.conn))
        kinds = {int(row["seq"]): row["kind"] for row in journal.rows()}
    approvals = [seq for seq, kind in kinds.items() if kind == "configuration-approved"]
    assert approvals
    assert {named[seq] for seq in approvals} == {"cli config approve"}
    status, out, err = floor.run("verify")
    assert status == 0, err
    (line,) = [line for line in out.splitlines() if line.startswith("writers: ")]
    assert "cli config approve" in line
    assert "unrecorded" in line  # the site's enrollments, appended in process without a name


def test_a_table_word_whose_provenance_was_edited_to_apply_is_named_by_verify(
    floor: Floor,
) -> None:
    with Journal(floor.database) as journal:
        receipts = journal.append_many(forged_round(), provenance=INTAKE)
    assert all(receipt.applied for receipt in receipts)
    status, _, err = floor.run("verify")
    assert status == 0, err
    first = receipts[0].seq
    with sqlite3.connect(floor.database) as edit:
        edit.execute("UPDATE journal SET provenance = 'apply' WHERE seq = ?", [first])
    status, _, err = floor.run("verify")
    assert status == 1
    assert f"row {first}: bet-sensed for table T1 says it came from apply" in err


def test_archive_segments_carry_each_rows_provenance_and_old_segments_still_verify(
    floor: Floor, tmp_path: Path
) -> None:
    with Journal(floor.database) as journal:
        journal.append_many(forged_round(), provenance=INTAKE)
        named = dict(provenances(journal.db.conn))
        last = journal.head[0]
    archive = tmp_path / "archive"
    status, _, err = floor.run("archive", "--rows", str(last - 1), "--out", str(archive))
    assert status == 0, err
    (segment,) = archive.glob("journal-*.jsonl.gz")
    lines = [json.loads(line) for line in gzip.decompress(segment.read_bytes()).splitlines()]
    rows = [line for line in lines if "event_id" in line]
    assert rows
    assert {row["seq"]: row["provenance"] for row in rows} == {
        seq: named[seq] for seq in range(1, last)
    }
    status, out, err = floor.run("verify", "--archives", str(archive))
    assert status == 0, err
    assert "serial 17" in out
    # A segment as written before provenance was carried: no such field on its lines.
    _strip_provenance(segment, floor.database)
    status, out, err = floor.run("verify", "--archives", str(archive))
    assert status == 0, err
    assert "unrecorded" in out


def _strip_provenance(segment: Path, database: Path) -> None:
    """Rewrite ``segment`` as the writer before provenance wrote it, its digests made again."""
    raw = gzip.decompress(segment.read_bytes()).splitlines(keepends=True)
    lines, digest = [], hashlib.sha256()
    for line in raw[:-1]:
        document = json.loads(line)
        document.pop("provenance", None)
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        lines.append(text)
        digest.update(text)
    trailer = json.loads(raw[-1])
    trailer["lines_sha256"] = digest.hexdigest()
    lines.append(json.dumps(trailer, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    segment.write_bytes(gzip.compress(b"".join(lines), mtime=0))
    with sqlite3.connect(database) as edit:
        edit.execute(
            "UPDATE archives SET sha256 = ? WHERE segment = ?",
            [hashlib.sha256(segment.read_bytes()).hexdigest(), segment.name],
        )
