"""Supervisors' and auditors' commands over the journal: meters, hits, verify-hit, adjust, apply.

Every command takes ``--db PATH`` (default ``var/journal.db``, or ``$JACKPOTD_DB``) and
``--json``. Commands that change something (``verify-hit``, ``adjust``) append an event with
who and why; the journal records a refusal as faithfully as an acceptance.
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import TYPE_CHECKING, Any

import msgspec

from controller.cli.common import (
    CommandError,
    add_db,
    open_journal,
    open_reader,
    read_lines,
    report_receipt,
)
from controller.cli.signing import add_signers, signed, signers
from controller.clock import utc_now
from controller.effects import fraction_text
from controller.events import HitVerified, MeterAdjusted, RoundVoided, decode_event
from controller.ledger.pool import ACCOUNTS
from controller.money import MoneyError, format_cents, format_percent, parse_dollars

if TYPE_CHECKING:
    import argparse

    from controller.ledger.pool import Pool


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the journal commands."""
    meters = commands.add_parser("meters", help="every pool's meters and counters")
    add_db(meters)
    meters.set_defaults(run=run_meters)

    hits = commands.add_parser("hits", help="progressive hits and payouts needing verification")
    add_db(hits)
    hits.add_argument("--pending", action="store_true", help="only those awaiting verification")
    hits.add_argument("--pool", help="only this pool's")
    hits.set_defaults(run=run_hits)

    verify_hit = commands.add_parser("verify-hit", help="verify a pending payout so it is paid")
    add_db(verify_hit)
    verify_hit.add_argument("hit", help="the payout id (see jackpotd hits --pending)")
    add_signers(verify_hit, dual=True)
    verify_hit.set_defaults(run=run_verify_hit)

    adjust = commands.add_parser("adjust", help="a documented correction to a pool")
    add_db(adjust)
    adjust.add_argument("pool")
    adjust.add_argument("--amount", required=True, help="signed dollars, e.g. -12.34 or +$5")
    adjust.add_argument("--account", choices=ACCOUNTS, default="meter")
    adjust.add_argument("--reason", required=True)
    add_signers(adjust, dual=True)
    adjust.set_defaults(run=run_adjust)

    void = commands.add_parser("void", help="void a round (a misdeal, or a held round)")
    add_db(void)
    void.add_argument("table")
    void.add_argument("round")
    void.add_argument("--reason", required=True)
    add_signers(void)
    void.set_defaults(run=run_void)

    feed = commands.add_parser("apply", help="append events from a JSON-lines file (labs, tests)")
    add_db(feed)
    feed.add_argument("events", help="a file of one JSON event per line, or - for stdin")
    feed.set_defaults(run=run_apply)


def pool_summary(pool: Pool) -> dict[str, Any]:
    """A pool's meters and counters as JSON (cents; exact amounts as fraction text)."""
    terms = pool.terms
    return {
        "pool": pool.pool_id,
        "paytable": terms.paytable,
        "revision": pool.revision,
        "meter_cents": pool.meter_cents,
        "meter_exact": fraction_text(pool.meter),
        "reserve_cents": pool.reserve_cents,
        "reserve_exact": fraction_text(pool.reserve),
        "overflow_cents": pool.overflow_cents,
        "overflow_exact": fraction_text(pool.overflow),
        "seed_cents": terms.seed_cents,
        "limit_cents": terms.limit_cents,
        "rate_of_progression": format_percent(terms.rate_of_progression),
        "reserve_rate": format_percent(terms.reserve_rate),
        "pending_revision": pool.pending_revision,
        "wagers": pool.wagers_count,
        "wagers_cents": pool.wagers_cents,
        "contributions_exact": fraction_text(pool.contributions),
        "hits": pool.hits_count,
        "paid_cents": pool.paid_cents,
        "house_funding_cents": pool.house_funding_cents,
        "reserve_funding_cents": pool.reserve_funding_cents,
        "adjustments_cents": pool.adjustments_cents,
        "last_hits": [
            {
                "hit": hit.hit_id,
                "table": hit.table_id,
                "seat": hit.seat,
                "line": hit.line,
                "amount_cents": hit.amount_cents,
            }
            for hit in pool.last_hits
        ],
    }


def run_meters(args: argparse.Namespace) -> int:
    """Print every pool."""
    with open_reader(args) as journal:
        pools = [pool_summary(pool) for _, pool in sorted(journal.state.pools.items())]
    if args.json:
        print(json.dumps({"pools": pools}, indent=2))
        return 0
    for pool in pools:
        limit = format_cents(pool["limit_cents"]) if pool["limit_cents"] is not None else "none"
        pending = (
            f", revision {pool['pending_revision']} queued" if pool["pending_revision"] else ""
        )
        print(f"{pool['pool']}  [{pool['paytable']}, revision {pool['revision']}{pending}]")
        meter, seed = format_cents(pool["meter_cents"]), format_cents(pool["seed_cents"])
        print(f"  meter     {meter:>16}   seed {seed}, limit {limit}")
        reserve, overflow = (
            format_cents(pool["reserve_cents"]),
            format_cents(pool["overflow_cents"]),
        )
        print(f"  reserve   {reserve:>16}   overflow {overflow}")
        print(
            f"  wagers    {pool['wagers']:>16,}   {format_cents(pool['wagers_cents'])} at "
            f"{pool['rate_of_progression']} + {pool['reserve_rate']} reserve"
        )
        paid = format_cents(pool["paid_cents"])
        print(f"  hits      {pool['hits']:>16,}   {paid} paid from the meter")
        print(
            f"  seeds     house {format_cents(pool['house_funding_cents'])}, "
            f"reserve {format_cents(pool['reserve_funding_cents'])}; "
            f"adjustments {format_cents(pool['adjustments_cents'])}"
        )
    return 0


def run_hits(args: argparse.Namespace) -> int:
    """Print progressive hits and payouts that needed verification, newest first."""
    with open_reader(args) as journal:
        records = journal.verification_records(pending_only=args.pending, pool_id=args.pool)
    rows = [record.row() for record in records]
    if args.json:
        print(json.dumps({"hits": rows}, indent=2))
        return 0
    if not rows:
        print("no pending payouts" if args.pending else "no hits")
    for row in rows:
        flags = " TAX" if row["tax_report"] else ""
        status = row["status"].upper() + (f" by {row['verified_by']}" if row["verified_by"] else "")
        print(
            f"{row['payout_id']}  {row['at']}  table {row['table_id']} seat {row['seat']}  "
            f"{row['line']}  {format_cents(row['win_cents'])}  {status}{flags}"
        )
    return 0


def run_verify_hit(args: argparse.Namespace) -> int:
    """Mark a pending payout verified (two signers at or above the dual-control amount)."""
    with open_journal(args) as journal:
        keys = signers(args, journal, "verify-hit")
        event = HitVerified(f"verify-{uuid.uuid4()}", utc_now(), args.hit, keys[0][0])
        return report_receipt(args, journal.append(signed(event, keys)))


def run_void(args: argparse.Namespace) -> int:
    """Void a round: its wagers are returned and their contributions reversed."""
    with open_journal(args) as journal:
        keys = signers(args, journal, "void-round")
        event = RoundVoided(
            f"void-{uuid.uuid4()}", utc_now(), args.table, args.round, keys[0][0], args.reason,
            refund_contributions=True,
        )  # fmt: skip
        return report_receipt(args, journal.append(signed(event, keys)))


def run_adjust(args: argparse.Namespace) -> int:
    """Journal a documented correction."""
    text = args.amount.strip()
    sign = -1 if text.startswith("-") else 1
    amount = text.lstrip("+-").strip()
    try:
        cents = sign * parse_dollars(amount if amount.startswith("$") else f"${amount}")
    except MoneyError as error:
        raise MoneyError(f"--amount: {error}") from error
    with open_journal(args) as journal:
        keys = signers(args, journal, "adjust")
        event = MeterAdjusted(
            f"adjust-{uuid.uuid4()}",
            utc_now(),
            args.pool,
            args.account,
            cents,
            keys[0][0],
            args.reason,
        )
        return report_receipt(args, journal.append(signed(event, keys)))


def run_apply(args: argparse.Namespace) -> int:
    """Append JSON-lines events; exit 1 if any was refused."""
    lines = read_lines(args.events)
    try:
        events = [decode_event(line) for line in lines if line.strip()]
    except msgspec.MsgspecError as error:
        raise CommandError(f"{args.events}: {error}") from error
    with open_journal(args, must_exist=False) as journal:
        receipts = journal.append_many(events)
    refused = 0
    for receipt in receipts:
        refused += not receipt.applied
        if args.json:
            print(
                json.dumps(
                    {
                        "seq": receipt.seq,
                        "event_id": receipt.event_id,
                        "outcome": receipt.outcome,
                        "reason": receipt.reason,
                        "duplicate": receipt.duplicate,
                    }
                )
            )
        elif not receipt.applied:
            print(
                f"row {receipt.seq} {receipt.event_id}: refused: {receipt.reason}", file=sys.stderr
            )
    if not args.json:
        print(f"{len(receipts)} events, {refused} refused")
    return 1 if refused else 0
