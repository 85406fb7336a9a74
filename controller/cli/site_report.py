"""``jackpotd report sites``: at central, each linked property as its journal has it.

docs/wide-area.md, "Operations". For each property central links: what it applied of the
property's chain (contributions and their wagers, hits and what central awarded for them), the
last ``site_seq`` applied and how long ago its last message came (the lag), how many applied
messages no matched reconciliation covers yet, the last reconciliation (through which
``site_seq``, when, matched or the differences), and whether the link is halted and why.

The links are the journal's state (what the ledger applied); the times are the rows' (central's
clock when each message was journaled), and the awards the ``award`` effects of those rows. The
command exits 1 while a link is halted: nothing of that property is applied until a manager
acts.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from controller.cli.common import CommandError, add_report_db, command, open_reader
from controller.cli.tables import Column, print_table
from controller.cli.times import local_time
from controller.clock import utc_now
from controller.effects import decode_effects
from controller.events import decode_event
from controller.journal import JournalError
from controller.money import format_cents
from controller.wide_effects import AwardMade, SiteReconciled
from controller.wide_events import SiteReported

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

    from controller.ledger.wide_area.sites import LinkedSite

SITE_KINDS = frozenset({"site-reported", "site-totals"})
"""The kinds of the rows a linked property's messages and totals are journaled as."""


def register(what: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report sites`` under ``report``."""
    sites = command(
        what,
        "sites",
        help="at central, each linked property: contributions, lag, last reconciliation",
        examples=(
            "  jackpotd report sites\n"
            "  jackpotd report sites --json | jq '.sites[] | {site, lag_s, unreconciled}'"
        ),
    )
    add_report_db(sites)
    sites.set_defaults(run=run)


@dataclass(slots=True)
class Activity:
    """What a property's rows say: its last message, its awards, its last reconciliation."""

    last_message_at: str | None = None
    last_message_row: int | None = None
    awards: int = 0
    awarded_cents: int = 0
    reconciled_at: str | None = None
    reconciled_row: int | None = None
    reconciliation: SiteReconciled | None = None


def activities(rows: Iterable[dict[str, Any]]) -> dict[str, Activity]:
    """Each property's activity, from the rows its messages and totals were journaled as."""
    found: dict[str, Activity] = {}
    for row in rows:
        if row["kind"] not in SITE_KINDS:
            continue
        seq, at = int(row["seq"]), str(row["at"])
        try:
            event = decode_event(row["event"])
            effects = decode_effects(str(row["effects"] or "[]"))
        except msgspec.MsgspecError as error:
            raise JournalError(f"row {seq}: {error}") from error
        if isinstance(event, SiteReported):
            heard = found.setdefault(event.message.site, Activity())
            heard.last_message_at, heard.last_message_row = at, seq
        for effect in effects:
            if isinstance(effect, AwardMade):
                awarded = found.setdefault(effect.site, Activity())
                awarded.awards += 1
                awarded.awarded_cents += effect.amount_cents
            elif isinstance(effect, SiteReconciled):
                reconciled = found.setdefault(effect.site, Activity())
                reconciled.reconciled_at, reconciled.reconciled_row = at, seq
                reconciled.reconciliation = effect
    return found


def site_document(
    site: str, linked: LinkedSite, activity: Activity, now: datetime
) -> dict[str, Any]:
    """One linked property as ``--json`` gives it (cents, UTC times, seconds)."""
    link = linked.link
    heard = activity.last_message_at
    lag = None if heard is None else (now - datetime.fromisoformat(heard)).total_seconds()
    last = activity.reconciliation
    return {
        "site": site,
        "pools": list(linked.pools),
        "contributions": link.contributions,
        "wagered_cents": link.wager_cents,
        "hits": link.hits,
        "awarded_cents": activity.awarded_cents,
        "awards_unconfirmed": len(linked.awards),
        "applied_through": link.through,
        "head": link.head,
        "last_message_at": heard,
        "last_message_row": activity.last_message_row,
        "lag_s": None if lag is None else round(lag, 3),
        "reconciled_through": link.reconciled_through,
        "unreconciled": link.through - link.reconciled_through,
        "last_reconciliation": None
        if last is None
        else {
            "through": last.through,
            "at": activity.reconciled_at,
            "row": activity.reconciled_row,
            "matched": last.matched,
            "problems": list(last.problems),
        },
        "halted": bool(link.halted),
        "halted_reason": link.halted or None,
    }


def _figures(site: dict[str, Any]) -> list[tuple[str, str]]:
    """One property's figures, each with what it is (``jackpotd meters``' layout)."""
    heard, lag, last = site["last_message_at"], site["lag_s"], site["last_reconciliation"]
    return [
        ("pools", ", ".join(site["pools"])),
        ("contributions", f"{site['contributions']:,}"),
        ("wagered", format_cents(site["wagered_cents"])),
        ("hits", f"{site['hits']:,}"),
        ("awarded", format_cents(site["awarded_cents"])),
        ("awards unconfirmed", f"{site['awards_unconfirmed']:,}"),
        ("applied through site_seq", f"{site['applied_through']:,}"),
        ("last message", "never" if heard is None else local_time(heard)),
        ("lag", "" if lag is None else f"{lag:,.0f} s"),
        ("reconciled through site_seq", f"{site['reconciled_through']:,}"),
        ("applied, not reconciled", f"{site['unreconciled']:,}"),
        ("last reconciliation", "none" if last is None else local_time(last["at"])),
        ("its totals", "" if last is None else "matched" if last["matched"] else "MISMATCHED"),
        ("link", "HALTED" if site["halted"] else "taking messages"),
    ]


def _print_text(at: str, sites: list[dict[str, Any]]) -> None:
    print(f"Linked properties at {local_time(at)}; lag: since its last message was journaled")
    figures = [_figures(site) for site in sites]
    columns = [Column("property"), *(Column(site["site"], figures=True) for site in sites)]
    rows = [
        (label, *(each[number][1] for each in figures))
        for number, (label, _) in enumerate(figures[0])
    ]
    print_table(columns, rows)
    for site in sites:
        last = site["last_reconciliation"]
        if site["halted"]:
            print(f"{site['site']}: halted: {site['halted_reason']}")
        if last is not None and not last["matched"]:
            for problem in last["problems"]:
                print(f"{site['site']}: reconciliation through {last['through']}: {problem}")


def run(args: argparse.Namespace) -> int:
    """Print each linked property; exit 1 while a link is halted."""
    if args.start is not None or args.end is not None:
        raise CommandError("--from and --to are for the pools' report: report sites is as of now")
    at = utc_now()
    now = datetime.fromisoformat(at)
    with open_reader(args) as journal:
        linked = dict(journal.state.sites)
        found = activities(journal.rows()) if linked else {}
    sites = [
        site_document(site, linked[site], found.get(site, Activity()), now)
        for site in sorted(linked)
    ]
    halted = [site["site"] for site in sites if site["halted"]]
    if args.json:
        print(json.dumps({"at": at, "sites": sites, "halted": halted}, indent=2))
    elif not sites:
        print("no linked properties: this journal is not central's (docs/wide-area.md)")
    else:
        _print_text(at, sites)
    if halted:
        print(f"halted until a manager acts: {', '.join(halted)}", file=sys.stderr)
    return 1 if halted else 0
