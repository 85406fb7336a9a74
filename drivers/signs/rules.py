"""What one sign's settings say it shows: its pool, its tables, its timing and its texts.

:class:`SignRules` is checked when the settings are loaded (a rate above one second, an
unknown field in the jackpot's format), and it words every text a sign shows: the meter (a
mystery level's with its "must hit by"), a hit, a pool out of play. When each text shows is
the state machine's (:mod:`drivers.signs.behaviour`).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from controller.errors import ConfigurationError
from controller.money import format_cents

if TYPE_CHECKING:
    from controller.outputs import HitAnnouncement

ClosedMode = Literal["closed", "alternate"]
"""What a faulty sign shows: CLOSED only, or the fault and the meter in turn."""

MAX_HIT_DELAY_S: Final = 1.0
"""A hit must show within this long of arriving, so ``min_interval_s`` may not exceed it."""

SUSPENDED: Final = "suspended"
"""A meter's status while its pool is out of play (controller/ledger/pool_life.py)."""
SUSPENDED_TEXT: Final = "SUSPENDED"
MUST_HIT_BY_TEXT: Final = "MUST HIT BY"

JACKPOT_FIELDS: Final = frozenset({"table", "seat", "amount", "pool", "line"})
"""The fields ``jackpot_format`` may name."""


class SignRulesError(ConfigurationError, ValueError):
    """Sign settings that cannot work (a rate above one second, an unknown format field)."""


@dataclass(frozen=True, slots=True)
class SignRules:
    """What one sign shows: its pool, its tables and its timing (see the module docstring)."""

    pool_id: str
    tables: frozenset[str] = frozenset()
    """The tables the sign hangs over: any of them closed makes the sign show CLOSED."""
    min_interval_s: float = 0.25
    """The sign is never written more often than this."""
    jackpot_hold_s: float = 10.0
    """How long JACKPOT stays up after a hit arrives."""
    closed_mode: ClosedMode = "closed"
    alternate_s: float = 2.0
    """In turns (fault and meter, or several hits): how long each is shown."""
    closed_text: str = "CLOSED"
    jackpot_format: str = "JACKPOT {table} SEAT {seat} {amount}"
    """``str.format`` fields: table, seat, amount (``$12,345.67``), pool, line."""
    width: int | None = None
    """The longest text the sign shows whole (an Alpha sign's ``string_size``); a suspended
    pool's reason is shown only if ``SUSPENDED <reason>`` fits. None: any length."""

    def __post_init__(self) -> None:
        if not 0 < self.min_interval_s <= MAX_HIT_DELAY_S:
            raise SignRulesError(
                f"min_interval_s must be above 0 and at most {MAX_HIT_DELAY_S} s "
                "(a hit must show within one second)"
            )
        if self.jackpot_hold_s <= 0:
            raise SignRulesError("jackpot_hold_s must be above 0")
        if self.alternate_s < self.min_interval_s:
            raise SignRulesError("alternate_s must be at least min_interval_s")
        if self.closed_mode not in ("closed", "alternate"):
            raise SignRulesError(f"closed_mode {self.closed_mode!r}: write closed or alternate")
        if not self.closed_text.strip():
            raise SignRulesError("closed_text must not be blank")
        self._check_jackpot_format()

    def _check_jackpot_format(self) -> None:
        try:
            parsed = list(string.Formatter().parse(self.jackpot_format))
        except ValueError as error:
            raise SignRulesError(f"jackpot_format {self.jackpot_format!r}: {error}") from error
        names = {name for _text, name, _spec, _conv in parsed if name is not None}
        unknown = names - JACKPOT_FIELDS
        if unknown:
            known = ", ".join(sorted(JACKPOT_FIELDS))
            named = ", ".join(repr(name) for name in sorted(unknown))
            raise SignRulesError(f"jackpot_format names {named}; it may name {known}")
        try:
            self._format_jackpot("T1", 1, 100, "line")
        except (ValueError, TypeError) as error:
            raise SignRulesError(f"jackpot_format {self.jackpot_format!r}: {error}") from error

    def meter_text(self, cents: int, must_hit_by_cents: int | None = None) -> str:
        """A meter as the sign shows it: ``$12,345.67``.

        A mystery level's: ``$12,345.67 MUST HIT BY $15,000.00`` when that fits (``width``),
        else its meter alone.
        """
        meter = format_cents(cents)
        if must_hit_by_cents is None:
            return meter
        whole = f"{meter} {MUST_HIT_BY_TEXT} {format_cents(must_hit_by_cents)}"
        return whole if self.width is None or len(whole) <= self.width else meter

    def jackpot_text(self, hit: HitAnnouncement) -> str:
        """A hit as the sign shows it: ``JACKPOT T3 SEAT 2 $12,345.67`` by default."""
        return self._format_jackpot(hit.table_id, hit.seat, hit.amount_cents, hit.line or "")

    def life_text(self, status: str, reason: str) -> str:
        """A pool out of play: ``SUSPENDED <reason>`` if it fits, else ``SUSPENDED``; ``CLOSED``."""
        if status != SUSPENDED:
            return self.closed_text
        whole = f"{SUSPENDED_TEXT} {reason}".strip()
        return whole if self.width is None or len(whole) <= self.width else SUSPENDED_TEXT

    def _format_jackpot(self, table: str, seat: int, cents: int, line: str) -> str:
        return self.jackpot_format.format(
            table=table, seat=seat, amount=format_cents(cents), pool=self.pool_id, line=line
        )
