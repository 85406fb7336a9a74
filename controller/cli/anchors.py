"""``jackpotd verify``, ``jackpotd anchor save`` and ``jackpotd key``: proving the history.

* ``verify`` checks the chain, replays the journal, checks the controller's checkpoints (their
  signatures, given ``--controller-key`` or the keys an anchors file lists) and the saved
  heads of ``--anchor`` files; it prints the head to keep (``--json``: a valid anchor line).
  It says plainly what it did not check (no checkpoint signature checked: no key given, or no
  checkpoint; a checkpoint of archived rows without ``--archives``), and with ``--strict``
  exits 1 on any of it.
* ``anchor save --to FILE`` verifies the journal against the anchors and keys FILE already
  holds, and only then appends the head to it: keep FILE off the box.
* ``key generate --out FILE`` makes the controller's signing key (mode 0600, never over an
  existing file) and prints its public half, to keep off the box; ``key show FILE`` prints the
  public half of a key file again. ``key generate --sealing --out FILE`` makes the mystery
  levels' sealing key instead, the secret a cluster's signers share (controller/security/
  sealing_key.py), and prints its id.

docs/journal.md ("Checkpoints and anchors") and docs/operations.md say how they are used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.cli.archive import add_archives, archived_document, archived_lines
from controller.cli.common import CommandError, add_db, command, journal_location
from controller.cli.progress import counting
from controller.cli.report_check import check_report, read_report
from controller.cli.times import local_time
from controller.clock import utc_now
from controller.files import RECORD, append_file, write_file
from controller.journal.anchors import Anchors, read_anchors
from controller.ledger_journal import open_reader, verify_journal
from controller.money import format_cents
from controller.mystery.envelope import SealingKey
from controller.security.controller_key import (
    ControllerKey,
    ControllerKeyError,
    load_key,
    read_public_key,
    write_key,
)
from controller.security.keys import KeyFileError, read_key_file
from controller.security.sealing_key import write_sealing_key

if TYPE_CHECKING:
    import argparse

    from controller.journal.location import JournalLocation
    from controller.journal.row_checks import VerifyReport


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verify``, ``anchor`` and ``key``."""
    check = command(
        commands,
        "verify",
        help="check the hash chain, replay the journal, check checkpoints and anchors",
        examples=(
            "  jackpotd verify\n  jackpotd verify --anchor /mnt/offsite/pit-1.anchors --json\n"
            "  jackpotd verify --archives /var/lib/jackpotd/archive\n"
            "  jackpotd verify --strict --anchor /mnt/offsite/pit-1.anchors\n"
            "  jackpotd verify --report returns-2026-11.json"
        ),
    )
    add_db(check)
    add_trust(check)
    add_archives(check)
    check.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless a checkpoint signature was checked and no checkpoint or anchor "
        "check was left out",
    )
    check.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also check a saved report's JSON (jackpotd report returns --json): made again "
        "from the journal up to the head it names, it must be the same",
    )
    check.set_defaults(run=run_verify)

    anchor = command(
        commands,
        "anchor",
        help="save the journal's head off the box",
        examples="  jackpotd anchor save --to /mnt/offsite/pit-1.anchors",
    )
    anchor_commands = anchor.add_subparsers(dest="anchor_command", metavar="ACTION", required=True)
    save = command(
        anchor_commands,
        "save",
        help="verify, then append the head to an anchors file",
        examples="  jackpotd anchor save --to /mnt/offsite/pit-1.anchors",
    )
    add_db(save)
    save.add_argument("--to", required=True, type=Path, help="the anchors file (kept off the box)")
    add_trust(save)
    save.set_defaults(run=run_anchor_save)

    key = command(
        commands,
        "key",
        help="the controller's signing key",
        examples="  jackpotd key generate --out /etc/jackpotd/controller.key",
    )
    key_commands = key.add_subparsers(dest="key_command", metavar="ACTION", required=True)
    generate = command(
        key_commands,
        "generate",
        help="make a new controller key",
        examples=(
            "  jackpotd key generate --out /etc/jackpotd/controller.key --public-out controller.pub"
        ),
    )
    generate.add_argument("--out", required=True, type=Path, help="the key file to write (0600)")
    generate.add_argument("--public-out", type=Path, help="also write the public key here")
    generate.add_argument(
        "--sealing",
        action="store_true",
        help="the mystery levels' sealing key the cluster's signers share, not a controller key",
    )
    generate.set_defaults(run=run_key_generate)
    show = command(
        key_commands,
        "show",
        help="print a key file's public key and id",
        examples="  jackpotd key show /etc/jackpotd/controller.key",
    )
    show.add_argument("key_file", type=Path, help="the controller key file")
    show.set_defaults(run=run_key_show)


def add_trust(parser: argparse.ArgumentParser) -> None:
    """``--controller-key`` and ``--anchor``: what the checkpoints and the head are checked with."""
    parser.add_argument(
        "--controller-key",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a controller public key (as jackpotd key generate printed it); repeatable",
    )
    parser.add_argument(
        "--anchor",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="an anchors file: saved heads that must be in the chain, and controller keys; "
        "repeatable",
    )


def trust(paths: list[Path], keys: list[Path]) -> Anchors:
    """The saved heads and controller keys of anchors files and key files."""
    anchors = Anchors()
    for path in paths:
        anchors.add(read_anchors(path))
    for path in keys:
        anchors.add(Anchors(keys=[read_public_key(path)]))
    return anchors


def verify_document(report: VerifyReport) -> dict[str, Any]:
    """What ``verify --json`` prints; its ``head`` is an anchor (when ``ok``)."""
    last = report.checkpoints[-1] if report.checkpoints else None
    return {
        "ok": report.ok,
        "rows": report.rows,
        "pools": report.pools,
        "head": {"seq": report.head[0], "hash": report.head[1]},
        "checkpoint": last.document() if last else None,
        "checkpoints": len(report.checkpoints),
        "controller_keys": report.keys,
        "anchors": report.anchors,
        "signatures_checked": report.signatures_checked,
        "unchecked": report.unchecked(),
        "writers": report.writers,
        "problems": report.problems,
    }


def _print_report(report: VerifyReport, db: JournalLocation) -> None:
    if not report.ok:
        print(f"journal FAILED verification ({db}):", file=sys.stderr)
        for problem in report.problems:
            print(f"  {problem}", file=sys.stderr)
        return
    meters = ", ".join(f"{pool} {format_cents(cents)}" for pool, cents in report.pools.items())
    print(f"journal OK: {report.rows:,} rows, chain intact, replay matches ({meters})")
    print(f"head: row {report.head[0]} {report.head[1]}")
    if report.checkpoints:
        last = report.checkpoints[-1]
        print(
            f"checkpoints: {len(report.checkpoints)}, signatures {last.signature}; the last at "
            f"row {last.row} covers row {last.head_seq} (key {last.key_id}, "
            f"{local_time(last.at)})"
        )
    else:
        print("checkpoints: none")
    if report.anchors:
        print(f"anchors: {report.anchors} saved heads are in the chain")
    if report.writers:  # who journaled the rows (docs/journal.md, "Provenance")
        counted = sorted(report.writers.items(), key=lambda item: (-item[1], item[0]))
        print("writers: " + ", ".join(f"{writer} {rows:,}" for writer, rows in counted))
    for line in report.unchecked():
        print(f"NOT CHECKED: {line}")


def run_verify(args: argparse.Namespace) -> int:
    """Check the journal; exit 1 with the problems on any mismatch."""
    trusted = trust(args.anchor, args.controller_key)
    path = journal_location(args)  # a file, or a PostgreSQL journal's URL
    if args.report is not None:
        read_report(args.report)  # a file that is no report is refused before the long check
    with counting("verifying the journal (rows)") as progress:
        report = verify_journal(
            path,
            keys=trusted.keys,
            anchors=trusted.heads,
            progress=progress,
            archives=args.archives,
        )
    if args.json:
        print(json.dumps(verify_document(report) | archived_document(report), indent=2))
    else:
        _print_report(report, path)
        for line in archived_lines(report):
            print(line)
    if not report.ok:
        return 1
    if args.report is not None and not _report_holds(args.report, path):
        return 1
    if args.strict and report.unchecked():
        print(
            "jackpotd verify --strict: FAILED, not everything was checked (see NOT CHECKED)",
            file=sys.stderr,
        )
        return 1
    return 0


def _report_holds(saved: Path, path: JournalLocation) -> bool:
    """Whether the saved report is what the journal makes; its differences on stderr if not."""
    reader = open_reader(path)
    try:
        rows = sorted(reader.rows(), key=lambda row: int(row["seq"]))
    finally:
        reader.close()
    problems = check_report(saved, rows)
    for problem in problems:
        print(f"report {saved}: {problem}", file=sys.stderr)
    if not problems:
        print(f"report {saved}: made again from this journal, it is the same")
    return not problems


def run_anchor_save(args: argparse.Namespace) -> int:
    """Verify against what the anchors file holds; if it passes, append the head to it."""
    existing = [args.to] if args.to.exists() else []
    trusted = trust([*existing, *args.anchor], args.controller_key)
    path = journal_location(args)
    with counting("verifying the journal (rows)") as progress:
        report = verify_journal(path, keys=trusted.keys, anchors=trusted.heads, progress=progress)
    if not report.ok:
        _print_report(report, path)
        print(f"nothing saved to {args.to}", file=sys.stderr)
        return 1
    saved = Anchors() if not existing else read_anchors(args.to)
    # Keys given for the first time are kept with the heads they checked.
    lines: list[dict[str, Any]] = [
        {"controller_key": key} for key in trusted.keys if key not in saved.keys
    ]
    lines.append({"seq": report.head[0], "hash": report.head[1], "saved": utc_now()})
    with append_file(args.to, RECORD) as file:  # a new anchors file at 0640, whatever the umask
        file.write("".join(json.dumps(line) + "\n" for line in lines).encode())
    if args.json:
        print(json.dumps(lines[-1]))
    else:
        print(f"anchored row {report.head[0]} {report.head[1]} in {args.to}")
    return 0


def _print_public(key: ControllerKey) -> None:
    print(f"public key: {key.public_key}")
    print(f"key id:     {key.key_id}")
    print("for an anchors file (jackpotd verify --anchor FILE):")
    print(json.dumps({"controller_key": key.public_key, "key_id": key.key_id}))


def run_key_generate(args: argparse.Namespace) -> int:
    """Write a new controller key; print its public half to keep off the box."""
    if args.sealing:
        if args.public_out is not None:
            raise CommandError("--public-out: a sealing key has no public half (it is a secret)")
        sealing = SealingKey.generate()
        write_sealing_key(args.out, sealing)
        print(f"sealing key {sealing.key_id} written to {args.out} (mode 0600); copy it to "
              "every node's signer, and nowhere else (docs/ha.md)")  # fmt: skip
        return 0
    if args.public_out is not None and args.public_out.exists():
        raise CommandError(f"{args.public_out}: exists; not overwritten")
    key = ControllerKey.generate()
    write_key(args.out, key)
    if args.public_out is not None:
        write_file(args.public_out, (key.public_key + "\n").encode(), RECORD, exclusive=True)
    print(f"controller key written to {args.out} (mode 0600); keep its public half off this box:")
    _print_public(key)
    return 0


def run_key_show(args: argparse.Namespace) -> int:
    """Print the public key and id of a controller key file; an operator's, say whose it is."""
    try:
        key = load_key(args.key_file)
    except ControllerKeyError as error:
        try:
            operator = read_key_file(args.key_file)
        except KeyFileError:
            raise error from None  # the controller key's error says what the file is
        print(f"{args.key_file}: an operator's key file, not a controller key")
        print(f"operator:   {operator.operator}")
        print(f"public key: {operator.public_key}")
        print("enrolled with jackpotd operator add; jackpotd operator list shows the enrolled")
        return 0
    _print_public(key)
    return 0
