"""What a configuration approval changes, in words: each pool, table and setting, old → new.

``jackpotd config approve --dry-run`` prints these lines before a manager signs, so that what
they sign can be read: a pool or a table that is new is listed with its settings, one that
changes with each setting that differs (``old → new``), a paytable whose text changed by its
name. The same comparison as :mod:`controller.config.changes` (which decides what changes);
this module only says it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.events import PoolOpened, PoolTermsChanged, TableConfigured
from controller.money import format_cents, format_percent
from controller.wide_events import SiteLinked, WideAreaJoined

if TYPE_CHECKING:
    from decimal import Decimal

    from controller.events import ConfigurationApproved
    from controller.ledger.apply import LedgerState
    from controller.ledger.pool import PoolTerms

ARROW: Final = "→"
NOT_SET: Final = "none"
TABLE_SETTINGS: Final = (
    ("seats", "seats"),
    ("minimum_wager_cents", "minimum_wager"),
    ("wager_limits", "wager_limits"),
    ("bonus", "bonus"),
    ("ace_high", "ace_high"),
    ("insurance", "insurance"),
    ("dynasty", "dynasty"),
    ("dynasty_profile", "dynasty_profile"),
    ("progressive", "progressive"),
    ("pool_id", "pool"),
    ("envy_minimum_cents", "envy_minimum"),
    ("envy_includes_dealer", "envy_includes_dealer"),
    ("max_payout_cents", "max_payout"),
    ("verification_cents", "verification_amount"),
    ("tax_threshold_cents", "tax_threshold"),
    ("tax_wager_multiple", "tax_wager_multiple"),
    ("hit_order", "hit_order"),
)
"""A table's settings as the configuration file names them, in the file's order."""


def change_lines(approval: ConfigurationApproved, state: LedgerState) -> list[str]:
    """One line per pool, table, link and setting the approval changes (old → new)."""
    lines: list[str] = []
    for change in approval.changes:
        if isinstance(change, PoolOpened):
            lines.append(f"pool {change.pool_id}: new: {_terms_text(_event_terms(change))}")
        elif isinstance(change, PoolTermsChanged):
            lines += _pool_changed(change, state)
        elif isinstance(change, TableConfigured):
            lines += _table_lines(change, state.table_events.get(change.table_id))
        elif isinstance(change, SiteLinked):
            pools = ", ".join(change.pools) or NOT_SET
            lines.append(f"site {change.site}: linked at central, pools {pools}")
        elif isinstance(change, WideAreaJoined):
            pools = ", ".join(f"{ours} as {theirs}" for ours, theirs in change.pools.items())
            lines.append(f"wide area: joined as site {change.site}, pools {pools or NOT_SET}")
    authority = state.authority
    if authority.dual_control_cents != approval.dual_control_cents:
        old, new = (
            _cents(value) for value in (authority.dual_control_cents, approval.dual_control_cents)
        )
        lines.append(f"dual_control_amount: {old} {ARROW} {new}")
    if authority.lockout_after != approval.lockout_after:
        lines.append(f"lockout_after: {authority.lockout_after} {ARROW} {approval.lockout_after}")
    profile = approval.jurisdiction
    if not isinstance(profile, msgspec.UnsetType) and authority.jurisdiction != profile:
        old = (
            "none"
            if isinstance(authority.jurisdiction, msgspec.UnsetType)
            else authority.jurisdiction
        )
        lines.append(f"pool_profile: {old} {ARROW} {profile}")
    if authority.configuration is None:
        lines.append("configuration: approved for the first time")
    return lines


def change_document(approval: ConfigurationApproved, state: LedgerState) -> dict[str, Any]:
    """The same changes as JSON: the file's digest, the lines, and the events exactly."""
    return {
        "configuration": approval.configuration,
        "changes": change_lines(approval, state),
        "events": msgspec.to_builtins(approval.changes),
        "dual_control_cents": approval.dual_control_cents,
        "lockout_after": approval.lockout_after,
    }


def _pool_changed(change: PoolTermsChanged, state: LedgerState) -> list[str]:
    new = _event_terms(change)
    pool = state.pools.get(change.pool_id)
    if pool is None:  # pragma: no cover - terms change only for a pool the ledger has
        return [f"pool {change.pool_id}: terms {_terms_text(new)}"]
    old = pool.pending_terms if pool.pending_terms is not None else pool.terms
    when = "once its jackpot is won" if not change.apply_now else "now"
    differences = [
        f"pool {change.pool_id}: {name} {before} {ARROW} {after} ({when})"
        for name, before, after in zip(
            ("paytable", "seed", "rate_of_progression", "reserve_rate", "limit"),
            _terms_fields(old),
            _terms_fields(new),
            strict=True,
        )
        if before != after
    ]
    return differences or [f"pool {change.pool_id}: terms queued again ({when})"]


def _event_terms(
    event: PoolOpened | PoolTermsChanged,
) -> tuple[str, int, Decimal, Decimal, int | None]:
    return (
        event.paytable,
        event.seed_cents,
        event.rate_of_progression,
        event.reserve_rate,
        event.limit_cents,
    )


def _terms_fields(
    terms: PoolTerms | tuple[str, int, Decimal, Decimal, int | None],
) -> tuple[str, ...]:
    if isinstance(terms, tuple):
        paytable, seed, rate, reserve, limit = terms
        rates = (Fraction(rate), Fraction(reserve))
    else:
        paytable, seed, limit = terms.paytable, terms.seed_cents, terms.limit_cents
        rates = (terms.rate_of_progression, terms.reserve_rate)
    return (paytable, format_cents(seed), *(format_percent(rate) for rate in rates), _cents(limit))


def _terms_text(terms: tuple[str, int, Decimal, Decimal, int | None]) -> str:
    paytable, seed, progression, reserve, limit = _terms_fields(terms)
    return f"{paytable}, seed {seed}, progression {progression}, reserve {reserve}, limit {limit}"


def _table_lines(new: TableConfigured, old: TableConfigured | None) -> list[str]:
    table = f"table {new.table_id}"
    if old is None:
        settings = [
            f"{name} {_value(field, getattr(new, field))}"
            for field, name in TABLE_SETTINGS
            if getattr(new, field) not in (None, msgspec.UNSET)
        ]
        return [f"{table}: new: " + ", ".join(settings)]
    lines = [
        f"{table}: {name} {_value(field, getattr(old, field))} {ARROW} "
        f"{_value(field, getattr(new, field))}"
        for field, name in TABLE_SETTINGS
        if getattr(old, field) != getattr(new, field)
    ]
    lines += [
        f"{table}: paytable {name}'s text changed"
        for name, text in sorted(new.paytables.items())
        if name in old.paytables and old.paytables[name] != text
    ]
    return lines or [f"{table}: configured again, nothing it pays changes"]


def _value(field: str, value: object) -> str:
    if field == "envy_includes_dealer" and value is msgspec.UNSET:
        return "true"  # journaled before 58 Pa. Code § 688a.1 was read right: the old default
    if value is None or value is msgspec.UNSET:
        return NOT_SET
    if field.endswith("_cents") and isinstance(value, int):
        return format_cents(value)
    if field == "wager_limits" and isinstance(value, dict):
        spots = (
            f"{spot} {format_cents(limits.minimum_cents)} to {format_cents(limits.maximum_cents)}"
            for spot, limits in sorted(value.items())
        )
        return "; ".join(spots)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cents(value: int | None) -> str:
    return NOT_SET if value is None else format_cents(value)
