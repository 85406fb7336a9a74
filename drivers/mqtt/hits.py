"""What a follower believes of a hit on ``meter/<pool>/hit``: the controller's, its pool's, fresh.

A hit makes every sign of its pool celebrate (JACKPOT with a table, a seat and an amount), and
whoever holds a broker account may publish on the hit topics. So a follower given the
controller's public keys (:class:`~controller.meter_signature.MeterKeys`) shows a hit only if

* its signature holds under one of them, over the hit's domain (:data:`~controller.
  meter_signature.HIT_DOMAIN`) and every field: the controller announcing it, its pool, its
  payout id, its ``(epoch, seq)``, its ``at`` (unsigned, another key's, or any field altered:
  refused ``unsigned``/``forged``);
* the pool it names is its topic's (a genuine hit published again on another pool's topic is
  refused);
* it is dated no more than ``max_age_s`` ago (:data:`~controller.meter_signature.
  HIT_MAX_AGE_S`) by the station's clock: a genuine hit captured and published again later is
  refused ``stale``, since no order makes an old event look old (a hit is not a state that a
  newer one replaces);
* its payout id was not shown already: the controller publishes a hit at least once (again
  after a crash), and a replay within the age is a repeat, shown once. Given a file
  (:class:`SeenHits`), the payout ids shown within the age are kept in it, each written and
  flushed to disk before its hit is shown: a station that restarts reads them back, so a
  genuine hit captured and published again within the five minutes, after the restart, is a
  repeat too, never celebrated twice (docs/security.md, "A hit replayed after a restart").

Each refusal is counted (:attr:`HitCheck.refused`, and :attr:`HitCheck.stale` of them) and
logged, at most once a minute with the count since the last line, so that a flood of forged
hits neither reaches a sign nor floods the log. Without keys (a rig's display) a hit is
believed as it comes, and only repeats are dropped.
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import msgspec

from controller.errors import InputError
from controller.files import RECORD, append_file, write_file
from controller.meter_signature import HIT_DOMAIN, HIT_MAX_AGE_S
from drivers.mqtt.json_objects import decode_object
from drivers.mqtt.outgoing import SIGNED_VERSIONS, HitPayload, hit_of

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from controller.meter_signature import MeterKeys

log = logging.getLogger(__name__)

PAYOUTS_KEPT: Final = 4096
"""How many payout ids the follower remembers, to show each hit once."""
REFUSED_LOG_S: Final = 60.0
"""At most one log line per this many seconds about hits refused."""


class HitRefusedError(InputError, ValueError):
    """A hit that is not shown: not the controller's, another pool's, or stale."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class Seen(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One hit shown: its payout id and its time (a line of the seen hits' file)."""

    payout: str
    at: str


class SeenHits:
    """The payout ids of the hits shown within the age a hit is believed, kept in a file.

    One JSON line a hit, appended and flushed to disk (``fsync``) before the hit is shown, so
    that a hit is never shown without its line: a line cut short by a crash is of a hit not yet
    shown, and is passed over. Lines older than the age are dropped when the file is read and
    when it is rewritten (at :data:`PAYOUTS_KEPT` lines): older hits are refused ``stale``
    whatever the file says, so the file stays small. A hit is rare (a jackpot), so a flush on
    the follower's loop costs nothing a sign would see.
    """

    def __init__(self, path: Path, max_age_s: float, now: Callable[[], datetime]) -> None:
        self.path = path
        self.max_age_s = max_age_s
        self.now = now
        self.lines = 0

    def read(self) -> list[str]:
        """The payout ids shown within the age, oldest first; the file rewritten with only them."""
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return []
        kept = [seen for line in text.splitlines() if (seen := self._fresh(line)) is not None]
        self._rewrite(kept)
        return [seen.payout for seen in kept]

    def add(self, payout: str, at: str) -> None:
        """Keep ``payout`` (shown at ``at``) on disk before its hit is shown."""
        if self.lines >= PAYOUTS_KEPT:
            self.read()
        with append_file(self.path, RECORD) as out:
            out.write(msgspec.json.encode(Seen(payout, at)) + b"\n")
            out.flush()
            os.fsync(out.fileno())
        self.lines += 1

    def _fresh(self, line: bytes) -> Seen | None:
        try:
            seen = msgspec.json.decode(line, type=Seen)
            at = datetime.fromisoformat(seen.at)
        except (msgspec.MsgspecError, ValueError):
            return None  # cut short by a crash: its hit was not shown
        if at.tzinfo is None or (self.now() - at).total_seconds() > self.max_age_s:
            return None
        return seen

    def _rewrite(self, kept: list[Seen]) -> None:
        # Written whole beside the file and renamed over it: a crash leaves one or the other.
        staged = self.path.with_name(self.path.name + ".new")
        write_file(staged, b"".join(msgspec.json.encode(seen) + b"\n" for seen in kept), RECORD)
        with staged.open("rb") as done:
            os.fsync(done.fileno())
        staged.replace(self.path)
        self.lines = len(kept)


class HitCheck:
    """One follower's hits: checked, each payout id once (see the module docstring)."""

    def __init__(
        self,
        name: str,
        keys: MeterKeys | None,
        *,
        max_age_s: float = HIT_MAX_AGE_S,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        seen: Path | None = None,
    ) -> None:
        self.name = name
        self.keys = keys
        self.max_age_s = max_age_s
        self.now = now
        self.refused = 0
        """Hits refused: unsigned, forged, another pool's, stale or undecodable."""
        self.stale = 0
        """Of them, genuine hits dated more than ``max_age_s`` ago (replayed, or held back)."""
        self.repeated = 0
        """Hits of a payout id already shown (published again): dropped, not refused."""
        self._payouts: OrderedDict[str, None] = OrderedDict()
        self._seen = None if seen is None else SeenHits(seen, max_age_s, now)
        """Where the payouts shown are kept across restarts (None: in memory only)."""
        if self._seen is not None:
            self._payouts.update(dict.fromkeys(self._seen.read()))
        self._logged: float | None = None
        self._since = 0

    def admit(self, pool: str | None, payload: bytes) -> HitPayload | None:
        """The hit to show, None if its payout was shown; raises :class:`HitRefusedError`."""
        try:
            hit = self._checked(pool, payload)
        except HitRefusedError as error:
            self._refused(pool, error)
            raise
        except InputError as error:  # it does not decode
            refusal = HitRefusedError("undecodable", str(error))
            self._refused(pool, refusal)
            raise refusal from error
        if hit.payout in self._payouts:
            self.repeated += 1
            return None
        if self._seen is not None:
            self._seen.add(hit.payout, hit.at)  # on disk before it is shown
        self._payouts[hit.payout] = None
        if len(self._payouts) > PAYOUTS_KEPT:
            self._payouts.popitem(last=False)
        return hit

    def _checked(self, pool: str | None, payload: bytes) -> HitPayload:
        value = decode_object(payload, SIGNED_VERSIONS)
        if self.keys is not None and (refusal := self.keys.refusal(HIT_DOMAIN, value)):
            reason = "unsigned" if refusal == "unsigned" else "forged"
            raise HitRefusedError(reason, f"not the controller's: {refusal}")
        hit = hit_of(value)
        if hit.pool != pool:
            raise HitRefusedError("other-pool", f"a hit on pool {hit.pool!r} on {pool!r}'s topic")
        if self.keys is not None:
            self._fresh(hit)
        return hit

    def _fresh(self, hit: HitPayload) -> None:
        try:
            at = datetime.fromisoformat(hit.at)
        except ValueError as error:
            raise HitRefusedError("bad-at", f"its time {hit.at!r} is no ISO 8601 time") from error
        if at.tzinfo is None:
            raise HitRefusedError("bad-at", f"its time {hit.at!r} names no time zone")
        age = (self.now() - at).total_seconds()
        if age > self.max_age_s:
            self.stale += 1
            raise HitRefusedError(
                "stale",
                f"payout {hit.payout} of row {hit.seq} (epoch {hit.epoch}) is dated {hit.at}, "
                f"{age:.0f} s ago, more than {self.max_age_s:.0f} s: replayed, or held back too "
                "long to celebrate now",
            )

    def _refused(self, pool: str | None, error: HitRefusedError) -> None:
        """Count a hit refused; log it, at most once a minute."""
        self.refused += 1
        self._since += 1
        now = time.monotonic()
        if self._logged is not None and now - self._logged < REFUSED_LOG_S:
            return
        log.warning(
            "%s: a hit on pool %s refused, never shown: %s (%d refused since the last line, %d "
            "in all; further ones within %.0f s are only counted)",
            self.name, pool or "(none)", error, self._since, self.refused, REFUSED_LOG_S,
        )  # fmt: skip
        self._logged = now
        self._since = 0
