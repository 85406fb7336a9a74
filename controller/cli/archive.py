"""``jackpotd archive``: move old journal rows out to a sealed segment; the chain continues.

``jackpotd archive --before DATE | --rows N --out DIR`` verifies the journal, cuts it where
the controller's last checkpoint at or before the criterion covers (any row, if the journal
holds no checkpoint), writes the rows up to the cut to a gzip'd segment in ``DIR``, records
the segment in the journal, and removes the rows (:mod:`controller.journal.archive`;
docs/operations.md, "Archiving"). ``--db`` names a file or a PostgreSQL journal's URL: the
same segments either way (:mod:`controller.journal.postgres.archive`, docs/ha.md).

``jackpotd verify --archives DIR`` verifies the segments and the live rows as one chain; the
verify command takes the option from :func:`add_archives` and says what is archived with
:func:`archived_lines` and :func:`archived_document`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.cli.common import CommandError, add_db, command, journal_location
from controller.clock import utc_now
from controller.journal.archive import parse_moment
from controller.ledger_journal import archive_journal
from controller.security.controller_key import read_public_key

if TYPE_CHECKING:
    import argparse

    from controller.journal.archive_records import ArchiveRecord
    from controller.journal.row_checks import VerifyReport


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``archive``."""
    parser = command(
        commands,
        "archive",
        help="move old journal rows to a sealed, compressed segment; the chain continues",
        examples=(
            "  jackpotd archive --before 2026-11-01 --out /var/lib/jackpotd/archive\n"
            "  jackpotd archive --rows 1000000 --out /mnt/archive/pit-1 "
            "--controller-key /etc/jackpotd/controller.pub\n"
            "  jackpotd archive --db postgresql://jackpotd@db1/jackpot --before 2026-11-01 "
            "--out /srv/archive/pit-1"
        ),
    )
    add_db(parser)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--before",
        metavar="DATE",
        help="archive the rows dated before DATE (ISO 8601, UTC unless it says otherwise), "
        "up to the first row dated later",
    )
    which.add_argument(
        "--rows", type=int, metavar="N", help="archive the N oldest rows still in the journal"
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="the folder of the segments"
    )
    parser.add_argument(
        "--controller-key",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a controller public key: the journal's checkpoints must verify under it first; "
        "repeatable",
    )
    parser.set_defaults(run=run_archive)


def add_archives(parser: argparse.ArgumentParser) -> None:
    """The ``--archives DIR`` option of ``jackpotd verify``."""
    parser.add_argument(
        "--archives",
        type=Path,
        metavar="DIR",
        help="the folder of the journal's archive segments: verify them and the live rows as "
        "one chain, replayed from empty",
    )


def archived_lines(report: VerifyReport) -> list[str]:
    """What ``jackpotd verify`` says of the archived rows (nothing if none are)."""
    if not report.archived:
        return []
    segments = f"{report.segments} segment{'s' if report.segments != 1 else ''}"
    if report.segments_checked:
        lines = [f"archived: rows 1 to {report.archived} in {segments}, verified with the journal"]
    else:
        lines = [
            (
                f"archived: rows 1 to {report.archived} in {segments}, not read: verified from the "
                f"state and hash recorded at row {report.archived} (give --archives DIR to verify "
                "them)"
            )
        ]
    return lines + [f"note: {note}" for note in report.notes if note not in report.skipped]


def archived_document(report: VerifyReport) -> dict[str, Any]:
    """What ``jackpotd verify --json`` says of the archived rows."""
    return {
        "archived": {
            "rows": report.archived,
            "segments": report.segments,
            "verified": report.segments_checked,
        },
        "notes": report.notes,
    }


def _document(record: ArchiveRecord, out: Path) -> dict[str, Any]:
    return {
        "segment": str(out / record.segment),
        "first_seq": record.first_seq,
        "last_seq": record.last_seq,
        "rows": record.rows,
        "last_hash": record.last_hash,
        "sha256": record.sha256,
        "checkpoint_row": record.checkpoint_seq,
    }


def run_archive(args: argparse.Namespace) -> int:
    """Archive the rows asked for; print each segment written."""
    if args.rows is not None and args.rows < 1:
        raise CommandError("--rows: give a number of rows, 1 or more")
    location = journal_location(args)
    keys = [read_public_key(key) for key in args.controller_key]
    before = parse_moment(args.before) if args.before else None
    records = archive_journal(
        location, args.out, before=before, rows=args.rows, keys=keys, now=utc_now()
    )
    if args.json:
        print(json.dumps([_document(record, args.out) for record in records], indent=2))
        return 0
    for record in records:
        signed = (
            f"signed by the checkpoint at row {record.checkpoint_seq}"
            if record.checkpoint_seq is not None
            else "not signed: the journal holds no checkpoint"
        )
        print(f"archived rows {record.first_seq} to {record.last_seq} ({record.rows:,} rows)")
        print(f"  segment: {args.out / record.segment} (SHA-256 {record.sha256})")
        print(f"  cut: row {record.last_seq} {record.last_hash}, {signed}")
    print(f"the live journal continues at row {records[-1].last_seq + 1}")
    return 0
