"""``jackpotd config check PATH``: validate a configuration file and summarize it.

Exit status 0 and a summary (controller, pools, tables with their transports and paytables,
broker, serial ports, web, simulator) when the file is valid; exit status 1 and the one-line
``file: key: reason`` when it is not. ``--json`` prints either as JSON on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from controller.cli import config_approve
from controller.cli.common import command
from controller.cli.exits import inert
from controller.config.load import ConfigError, load_config
from controller.money import format_cents, format_percent
from controller.plugins import by_section

if TYPE_CHECKING:
    import argparse

    from controller.config.load import Config, PoolConfig, TableConfig
    from controller.events import TableConfigured


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``config check`` to the command line."""
    parser = command(
        commands,
        "config",
        help="check or approve a configuration file",
        examples=(
            "  jackpotd config check /etc/jackpotd/jackpotd.toml\n"
            "  jackpotd config approve --config /etc/jackpotd/jackpotd.toml --key manager.key"
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = command(
        actions,
        "check",
        help="validate a configuration file and summarize it",
        examples=(
            "  jackpotd config check /etc/jackpotd/jackpotd.toml\n"
            "  jackpotd config check deploy/jackpotd.toml --json"
        ),
    )
    check.add_argument("path", type=Path, help="the configuration file (TOML)")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(run=run_check)
    config_approve.register(actions)


def run_check(args: argparse.Namespace) -> int:
    """Validate ``args.path``: 0 and a summary, or 1 and the error."""
    try:
        config = load_config(args.path)
    except ConfigError as error:
        if args.json:
            document = {"valid": False, "file": error.source, "key": error.key}
            print(json.dumps({**document, "reason": error.reason}, indent=2))
        else:
            print(f"jackpotd: {inert(str(error))}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(as_json(config), indent=2))
    else:
        print("\n".join(summary(config)))
    return 0


def _pool_text(pool: PoolConfig) -> str:
    terms = pool.terms
    text = (
        f"{pool.pool_id}: {pool.paytable.name}, seed {format_cents(terms.seed_cents)}, "
        f"progression {format_percent(terms.rate_of_progression)}, "
        f"reserve {format_percent(terms.reserve_rate)}"
    )
    if terms.limit_cents is not None:
        text += f", limit {format_cents(terms.limit_cents)}"
    return text


def _dynasty_text(event: TableConfigured) -> str | None:
    """The Dynasty paytable and the profile it keeps to, if the table offers the wager."""
    if isinstance(event.dynasty, msgspec.UnsetType):
        return None
    return f"{event.dynasty} ({event.dynasty_profile} profile)"


def _dynasty_json(event: TableConfigured) -> dict[str, str | None]:
    """``dynasty`` and ``dynasty_profile`` of a table, null where it offers no Dynasty."""
    if isinstance(event.dynasty, msgspec.UnsetType):
        return {"dynasty": None, "dynasty_profile": None}
    profile = event.dynasty_profile
    return {"dynasty": event.dynasty, "dynasty_profile": str(profile)}


def _insurance(table: TableConfig) -> str | None:
    """The name of the table's insurance paytable, or None where it offers no insurance."""
    return table.rules.insurance.name if table.rules.insurance is not None else None


def _table_text(table: TableConfig) -> str:
    event = table.event
    bets = [
        f"{slot} {name}"
        for slot, name in (
            ("bonus", event.bonus),
            ("ace high", event.ace_high),
            ("insurance", _insurance(table)),
            ("dynasty", _dynasty_text(event)),
            ("progressive", event.progressive),
        )
        if name is not None
    ]
    if event.pool_id is not None:
        bets[-1] += f" -> pool {event.pool_id}"
    cap = event.max_payout_cents
    spots = event.wager_limits if isinstance(event.wager_limits, dict) else {}
    limits = (
        ", ".join(
            f"{spot} {format_cents(limit.minimum_cents)} to {format_cents(limit.maximum_cents)}"
            for spot, limit in sorted(spots.items())
        )
        or f"minimum {format_cents(event.minimum_wager_cents)}"
    )
    limits += f", max payout {format_cents(cap)}" if cap is not None else ", no max payout"
    return (
        f"{table.table_id}: {event.seats} seats over {table.transport}; {'; '.join(bets)}; {limits}"
    )


def summary(config: Config) -> list[str]:
    """The configuration in a few lines, for people."""
    c = config.controller
    verification = c.verification_cents
    verify = f"at or above {format_cents(verification)}" if verification is not None else "none"
    rules = (
        f"rules: {c.jurisdiction.value.upper()}, A-2-3-4-5 {c.ace_five.value}, "
        f"Dynasty profile {c.dynasty_profile}, {c.hit_order} hits"
    )
    tax = f"{format_cents(c.tax_threshold_cents)} and {c.tax_wager_multiple}x the wager"
    lines = [
        f"{config.source}: valid (sha256 {config.digest[:16]})",
        f"controller {c.controller_id} at site {c.site}; journal {c.journal}",
        rules,
        f"verification: {verify}; tax report at or above {tax}",
        f"pools ({len(config.pools)}):",
        *(f"  {_pool_text(pool)}" for pool in config.pools),
        f"tables ({len(config.tables)}):",
        *(f"  {_table_text(table)}" for table in config.tables),
    ]
    for section, spec in sorted(by_section().items()):
        entries = config.entries(section)
        if not entries:
            lines.append(f"{section}: none")
        for entry in entries:
            described = spec.describe(entry.settings) if spec.describe else ""
            lines.append(f"{entry.key} ({spec.name}): {described}".rstrip(": "))
    scheme = "https" if config.web.tls_cert else "http"  # the whole port is HTTPS with TLS
    lines.append(f"web: {scheme}://{config.web.host}:{config.web.port}/")
    return lines


def as_json(config: Config) -> dict[str, Any]:
    """The configuration as plain JSON types; money in cents, rates as percent text."""
    c = config.controller
    return {
        "valid": True,
        "file": config.source,
        "sha256": config.digest,
        "controller": {
            "site": c.site,
            "id": c.controller_id,
            "journal": str(c.journal),
            "jurisdiction": c.jurisdiction.value,
            "ace_five": c.ace_five.value,
            "dynasty_profile": c.dynasty_profile,
            "verification_cents": c.verification_cents,
            "tax_threshold_cents": c.tax_threshold_cents,
            "tax_wager_multiple": c.tax_wager_multiple,
            "hit_order": str(c.hit_order),
            "heartbeat_timeout_s": c.heartbeat_timeout_s,
            "paytable_dirs": [str(path) for path in c.paytable_dirs],
        },
        "pools": [
            {
                "id": pool.pool_id,
                "paytable": pool.paytable.name,
                "paytable_origin": pool.paytable.origin,
                "seed_cents": pool.terms.seed_cents,
                "rate_of_progression": format_percent(pool.terms.rate_of_progression),
                "reserve_rate": format_percent(pool.terms.reserve_rate),
                "limit_cents": pool.terms.limit_cents,
            }
            for pool in config.pools
        ],
        "tables": [
            {
                "id": table.table_id,
                "transport": str(table.transport),
                "seats": table.event.seats,
                "bonus": table.event.bonus,
                "ace_high": table.event.ace_high,
                "insurance": _insurance(table),
                "progressive": table.event.progressive,
                **_dynasty_json(table.event),
                "pool": table.event.pool_id,
                "minimum_wager_cents": table.event.minimum_wager_cents,
                "wager_limits": _limits_json(table.event),
                "envy_minimum_cents": table.event.envy_minimum_cents,
                "envy_includes_dealer": table.rules.envy_includes_dealer,
                "max_payout_cents": table.event.max_payout_cents,
                "heartbeat_timeout_s": table.heartbeat_timeout_s,
            }
            for table in config.tables
        ],
        "web": {"host": config.web.host, "port": config.web.port},
        **_drivers_json(config),
    }


def _drivers_json(config: Config) -> dict[str, Any]:
    """Each driver section as configured (an array for ``[[section]]``; None if absent)."""
    found: dict[str, Any] = {}
    for section, spec in sorted(by_section().items()):
        settings = [msgspec.to_builtins(entry.settings) for entry in config.entries(section)]
        found[section] = settings if spec.many else next(iter(settings), None)
    return found


def _limits_json(event: TableConfigured) -> dict[str, dict[str, int]]:
    """Each odds spot's minimum and maximum wager, in cents (docs/rules.md § 8)."""
    if not isinstance(event.wager_limits, dict):
        return {}
    return {
        spot: {"minimum_cents": limit.minimum_cents, "maximum_cents": limit.maximum_cents}
        for spot, limit in sorted(event.wager_limits.items())
    }
