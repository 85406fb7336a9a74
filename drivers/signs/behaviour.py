"""What a jackpot sign shows, and when: one pure state machine for every kind of sign.

A sign is bound to one pool, and optionally to the tables it hangs over. It shows:

* **the meter** of its pool, as ``$12,345.67``; a mystery level's with its ceiling,
  ``$1,234.56 MUST HIT BY $1,500.00``, when that fits the sign (``width``);
* **JACKPOT** with the table, seat and amount when its pool is hit, for ``jackpot_hold_s``
  counted from the hit's arrival; then the meter again, at its newest value. Meter updates
  arriving during the hold wait behind it (only the newest is kept). A hit never waits for
  another: a second hit during the hold shows at once, and while several hits are held the
  sign shows them in turn, each for ``alternate_s``, newest first;
* **CLOSED** while the controller is offline (failing closed) or one of its tables is
  closed; or, with ``closed_mode = "alternate"``, the fault and the meter in turn, each for
  ``alternate_s`` (the fault names the closed tables: ``T3 CLOSED``). A hit being held is
  still shown first: it was journaled before the fault.
* **SUSPENDED** instead of the meter while its pool is suspended (taken out of play: it keeps
  its meters and refuses wagers), followed by the reason journaled when the whole text fits
  the sign (``width``); **CLOSED** for a retired pool (docs/signs.md, "A pool's life").

**Rate.** The sign is never written more often than every ``min_interval_s`` (what the
sign can take). Any change is shown at most ``min_interval_s`` after it arrives, so a moving
meter is shown at least every 250 ms with the default, and a hit within one second (the
settings refuse a ``min_interval_s`` above 1 s).

**Order.** A meter or table state older than one already applied, by ``(epoch, seq)``, is
dropped and counted (:class:`controller.outputs.FollowerOrder`): a leader that lost its fence
(a zombie), or a late copy through a broker, cannot roll the sign back.

**Shape.** :class:`SignBehaviour` has no clock, no timer and no I/O. Each input (an update,
or the wake-up it asked for) comes with the time ``now`` in seconds on any monotonic clock,
and it answers a :class:`Step`: the texts to show now (at most one) and when to wake it up
next (``None``: only when the next update comes). Each step's ``wake_at`` replaces the
previous one, so a driver keeps a single timer. The serial Alpha sign drives it with the
event loop's clock (:mod:`drivers.signs.serial_sign`); an MQTT display can reuse it as it
is; tests drive it with a fake clock, without sleeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from controller.outputs import (
    ControllerUpdate,
    FollowerOrder,
    HitAnnouncement,
    MeterUpdate,
    PoolUpdate,
    TableUpdate,
)

if TYPE_CHECKING:
    from controller.outputs import AnyUpdate
    from drivers.signs.rules import SignRules

ShowKind = Literal["meter", "jackpot", "closed"]

EPSILON: Final = 1e-6
"""Timers may fire a hair early (the loop's clock resolution); this much counts as on time."""


@dataclass(frozen=True, slots=True)
class Show:
    """Show this text now."""

    text: str
    kind: ShowKind
    since: float | None = None
    """For the latency metric: when the oldest update that changed what the sign should show,
    and is not shown yet, arrived. None when only a timer changed the text (the end of a
    hold, the next turn): nothing waited for it."""


@dataclass(frozen=True, slots=True)
class Step:
    """The answer to one input: texts to show now, and when to be woken up next."""

    shows: tuple[Show, ...] = ()
    wake_at: float | None = None


@dataclass(slots=True)
class _Hit:
    payout_id: str
    text: str
    until: float


class SignBehaviour:
    """The state machine of one sign (see the module docstring)."""

    def __init__(self, rules: SignRules, name: str = "sign") -> None:
        self.rules = rules
        self.order = FollowerOrder(name)
        """The highest ``(epoch, seq)`` shown per meter and table: older updates are dropped."""
        self.meter_cents: int | None = None
        """The pool's newest meter, or None before the first update."""
        self.must_hit_by_cents: int | None = None
        """A mystery level's ceiling, as its newest meter says (None on any other pool)."""
        self.closed_tables: dict[str, str] = {}
        """The sign's tables that are closed now, with the reason."""
        self.controller_down: str | None = None
        """Why the controller is offline, or None while it is online."""
        self.pool_closed: str | None = None
        """Why the sign's pool is closed as a whole (a wide-area link down), or None."""
        self.out_of_play: str | None = None
        """What the sign shows for its pool suspended or retired (its meter's status), or None."""
        self.shown: str | None = None
        """The text last shown (None before the first)."""
        self.last_shown_at: float | None = None
        self._hits: list[_Hit] = []
        self._focus: _Hit | None = None
        self._switch_at: float | None = None
        self._fault_since: float | None = None
        self._pending_since: float | None = None
        self._waiting = False

    def update(self, update: AnyUpdate, now: float) -> Step:
        """An update arrived at ``now``."""
        return self._step(now, arrived=self._take(update, now))

    def wake(self, now: float) -> Step:
        """The wake-up asked for came (early, late or spurious wake-ups are harmless)."""
        return self._step(now, arrived=False)

    @property
    def waiting(self) -> bool:
        """Whether a text is held back by the rate limit (the next wake-up shows it)."""
        return self._waiting

    @property
    def faulty(self) -> bool:
        """Whether the controller or one of the sign's tables is offline."""
        return (
            self.controller_down is not None
            or self.pool_closed is not None
            or bool(self.closed_tables)
        )

    def _take(self, update: AnyUpdate, now: float) -> bool:
        """Record an update; whether it concerns this sign."""
        rules = self.rules
        match update:
            case MeterUpdate():
                if update.pool_id != rules.pool_id or not self._in_order(
                    f"meter/{update.pool_id}", update
                ):
                    return False
                self.meter_cents = update.meter_cents
                ceiling = update.must_hit_by_cents
                self.must_hit_by_cents = None if isinstance(ceiling, msgspec.UnsetType) else ceiling
                self.out_of_play = (
                    None
                    if isinstance(update.status, msgspec.UnsetType) or not update.status
                    else rules.life_text(update.status, str(update.status_reason or ""))
                )
            case HitAnnouncement():
                if update.pool_id != rules.pool_id:
                    return False
                if any(hit.payout_id == update.payout_id for hit in self._hits):
                    return False
                hit = _Hit(update.payout_id, rules.jackpot_text(update), now + rules.jackpot_hold_s)
                self._hits.append(hit)
                self._focus = hit
                self._switch_at = now + rules.alternate_s
            case TableUpdate():
                if update.table_id not in rules.tables or not self._in_order(
                    f"table/{update.table_id}", update
                ):
                    return False
                if update.online:
                    self.closed_tables.pop(update.table_id, None)
                else:
                    self.closed_tables[update.table_id] = update.reason
                self._fault_changed(now)
            case ControllerUpdate():
                self.controller_down = None if update.online else (update.reason or "offline")
                self._fault_changed(now)
            case PoolUpdate():
                return self._take_pool(update, now)
            case _:
                return False  # nothing a sign shows (a wager refused at a table)
        return True

    def _take_pool(self, update: PoolUpdate, now: float) -> bool:
        """The sign's pool closed or opened as a whole (a wide-area link, docs/wide-area.md)."""
        if update.pool_id != self.rules.pool_id or not self._in_order(
            f"pool/{update.pool_id}", update
        ):
            return False
        self.pool_closed = None if update.open else (update.reason or "closed")
        self._fault_changed(now)
        return True

    def _in_order(self, key: str, update: MeterUpdate | TableUpdate | PoolUpdate) -> bool:
        """Whether the update is not older than one already applied (see ``order``)."""
        return self.order.admits(key, update.epoch, update.seq)

    def _fault_changed(self, now: float) -> None:
        if not self.faulty:
            self._fault_since = None
        elif self._fault_since is None:
            self._fault_since = now

    def _step(self, now: float, *, arrived: bool) -> Step:
        self._expire(now)
        self._rotate(now)
        desired = self._desired(now)
        shows: tuple[Show, ...] = ()
        if desired is None or desired[0] == self.shown:
            self._pending_since = None
        else:
            if arrived and self._pending_since is None:
                self._pending_since = now
            due = self._due()
            if due is None or now + EPSILON >= due:
                text, kind = desired
                shows = (Show(text, kind, self._pending_since),)
                self.shown = text
                self.last_shown_at = now
                self._pending_since = None
        self._waiting = desired is not None and desired[0] != self.shown
        return Step(shows, self._next_wake(now, desired))

    def _due(self) -> float | None:
        """The earliest time the sign may be written again (None: now)."""
        if self.last_shown_at is None:
            return None
        return self.last_shown_at + self.rules.min_interval_s

    def _expire(self, now: float) -> None:
        held = [hit for hit in self._hits if hit.until > now + EPSILON]
        if len(held) == len(self._hits):
            return
        self._hits = held
        if self._focus not in held:
            self._focus = held[0] if held else None
            self._switch_at = now + self.rules.alternate_s if held else None

    def _rotate(self, now: float) -> None:
        if len(self._hits) < 2 or self._focus is None or self._switch_at is None:
            return
        if now + EPSILON >= self._switch_at:
            index = self._hits.index(self._focus)
            self._focus = self._hits[(index + 1) % len(self._hits)]
            self._switch_at = now + self.rules.alternate_s

    def _desired(self, now: float) -> tuple[str, ShowKind] | None:
        """What the sign should show at ``now``, or None (nothing known yet)."""
        rules = self.rules
        if self._focus is not None:
            return self._focus.text, "jackpot"
        if self.out_of_play is not None:  # journaled: no live meter to show, whatever else
            return self.out_of_play, "closed"
        if self._fault_since is not None:
            fault = self._fault_text()
            if rules.closed_mode == "closed" or self.meter_cents is None:
                return fault, "closed"
            if self._turn(now) % 2 == 0:
                return fault, "closed"
        if self.meter_cents is None:
            return None
        return rules.meter_text(self.meter_cents, self.must_hit_by_cents), "meter"

    def _turn(self, now: float) -> int:
        """In alternate mode, how many turns have passed since the fault began."""
        since = self._fault_since if self._fault_since is not None else now
        return int((now - since + EPSILON) // self.rules.alternate_s)

    def _fault_text(self) -> str:
        closed = self.rules.closed_text
        if self.controller_down is not None:
            return closed
        if self.pool_closed is not None:  # the whole pool, and why (fits a sign's line)
            return f"{closed} {self.pool_closed}"
        if self.rules.closed_mode == "closed":
            return closed
        return " ".join([*sorted(self.closed_tables), closed])

    def _next_wake(self, now: float, desired: tuple[str, ShowKind] | None) -> float | None:
        rules = self.rules
        times: list[float] = []
        if desired is not None and desired[0] != self.shown:
            due = self._due()
            if due is not None:
                times.append(due)
        if self._hits:
            times.append(min(hit.until for hit in self._hits))
            if len(self._hits) > 1 and self._switch_at is not None:
                times.append(self._switch_at)
        elif (
            self._fault_since is not None
            and rules.closed_mode == "alternate"
            and self.meter_cents is not None
        ):
            times.append(self._fault_since + (self._turn(now) + 1) * rules.alternate_s)
        return min(times) if times else None
