"""What the chaos test checks once a fault is healed and the floor drained, and its figures.

From the floor's record (``floor.jsonl``, :mod:`support.ha.chaos.floor`) and the journal itself:

* every event an agent stored (acknowledged to its device, then acknowledged to the agent by
  the controller: the floor drains every outbox to its end) is journaled, and once:
  ``acked_events_lost``, ``events_applied_twice``;
* at most one progressive award per hit (table, round, seat, line: a seat may win the mystery
  grand and a hand's major in one round): ``jackpots_awarded_twice``;
* every mystery reveal checks (``jackpotd report --json``: its trigger and nonce open the
  draw's commitment, in range, at the first contribution to reach it; docs/rules.md § 10) and
  every pool reconciles: ``mystery_hits``, ``reveals_unchecked``;
* ``jackpotd verify --db URL --json``: the chain verifies across every epoch, and the meters it
  recomputes by replaying the journal equal the leader's (``/api/state`` through HAProxy's web
  door) and, by the floor's answer, the last meter every follower applied;
* no follower's ``(epoch, seq)`` ever went backwards: ``display_regressions``;
* no progressive wager stored while its table was closed by the agent's own clock:
  ``wagers_while_closed``;
* the failover: from the fault to the first acknowledgement naming a journal row above every
  one before it, under a newer epoch when the fault moved the leader.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import psycopg

from support.drivers.mosquitto import HOST

if TYPE_CHECKING:
    from pathlib import Path

    from support.ha.chaos.faults import Fault

IN_FLIGHT_S: Final = 0.25
"""Acknowledgements of commits made before a fault arrive within this; not its end."""
MOVES_LEADER: Final = frozenset({"leader-kill", "zombie", "db-link"})


@dataclass
class FloorRecord:
    """``floor.jsonl`` read so far."""

    stored: list[str] = field(default_factory=list)
    refused: int = 0
    wagers_while_closed: list[str] = field(default_factory=list)
    commits: list[tuple[float, int, int]] = field(default_factory=list)
    """(time, journal row, epoch) of each new high row acknowledged."""
    regressions: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)


def read_floor(path: Path) -> FloorRecord:
    record = FloorRecord()
    for line in path.read_text(encoding="utf-8").splitlines():
        fact = json.loads(line)
        match fact["kind"]:
            case "stored":
                record.stored.append(fact["id"])
                if fact["wager"] and not fact["open"]:
                    record.wagers_while_closed.append(fact["id"])
            case "refused":
                record.refused += 1
            case "commit":
                record.commits.append((fact["t"], fact["seq"], fact["epoch"]))
            case "regression":
                record.regressions += 1
            case "error":
                record.errors.append(fact)
            case _:
                pass
    return record


def failover_seconds(fault: Fault, commits: list[tuple[float, int, int]]) -> float | None:
    """From the fault to the first new commit acknowledged (module docstring); None if none."""
    for at, _seq, epoch in commits:
        if at < fault.at + IN_FLIGHT_S:
            continue
        if fault.kind in MOVES_LEADER and epoch <= fault.epoch:
            continue
        return at - fault.at
    return None


def journaled(url: str) -> Counter[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute("SELECT event_id FROM journal").fetchall()
    return Counter(str(event_id) for (event_id,) in rows)


def awarded_twice(url: str) -> int:
    """Hits (table, round, seat) awarded more than one progressive payout."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT count(*) FROM payouts WHERE kind = 'progressive' "
            "GROUP BY table_id, round_id, seat, spot, line HAVING count(*) > 1"
        ).fetchall()
    return sum(int(count) - 1 for (count,) in rows)


def awards(url: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM payouts WHERE kind = 'progressive'"
        ).fetchone()
    return int(row[0]) if row else 0


def epoch(url: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT epoch FROM sequencer_fence").fetchone()
    return int(row[0]) if row else 0


def verify(url: str, root: Path) -> dict[str, Any]:
    """``jackpotd verify --db URL --json``'s document."""
    done = subprocess.run(
        [sys.executable, "-m", "controller", "verify", "--db", url, "--json"],
        capture_output=True, text=True, cwd=root, check=False, timeout=300,
    )  # fmt: skip
    try:
        document: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        return {"ok": False, "problems": [done.stdout[-2000:], done.stderr[-2000:]]}
    return document


@dataclass(frozen=True)
class Reveals:
    """The mystery levels' reveals ``jackpotd report`` read, and what did not check."""

    hits: int
    unchecked: list[str]
    balanced: bool


def reveals(url: str, root: Path) -> Reveals:
    """Every mystery reveal of the journal checked by ``jackpotd report --db URL --json``."""
    done = subprocess.run(
        [sys.executable, "-m", "controller", "report", "--db", url, "--json"],
        capture_output=True, text=True, cwd=root, check=False, timeout=300,
    )  # fmt: skip
    try:
        document: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        return Reveals(0, [done.stdout[-2000:], done.stderr[-2000:]], balanced=False)
    revealed = [
        draw["revealed"]
        for level in document.get("mystery_levels", [])
        for draw in level["draws"]
        if draw["revealed"] is not None
    ]
    unchecked = [str(each.get("problem")) for each in revealed if not each["checks"]]
    return Reveals(len(revealed), unchecked, bool(document.get("balanced")))


def leader_meters(web_door: int, attempts: int = 5) -> dict[str, int]:
    """The meters the leader shows, through HAProxy's web door (``/api/state``).

    Asked again after an error: after a failover of the database, the display's first read
    on its broken reading connection answers 500, and the next one reconnects.
    """
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(f"http://{HOST}:{web_door}/api/state", timeout=10) as page:
                state = json.loads(page.read())
            return {pool["pool"]: int(pool["meter_cents"]) for pool in state["pools"]}
        except urllib.error.HTTPError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@dataclass
class Findings:
    """One run's checks and figures."""

    kind: str
    target: str
    failover_s: float | None
    stored: int
    acked_events_lost: int
    events_applied_twice: int
    jackpots_awarded_twice: int
    display_regressions: int
    wagers_while_closed: int
    chain_ok: bool
    meters_agree: bool
    epoch: int
    awards: int
    mystery_hits: int
    reveals_unchecked: int
    problems: list[str]

    @property
    def passed(self) -> bool:
        """Nothing went wrong."""
        return not self.problems


def findings(
    fault: Fault,
    *,
    floor: FloorRecord,
    url: str,
    verified: dict[str, Any],
    leader: dict[str, int],
    followers: dict[str, Any],
    revealed: Reveals,
) -> Findings:
    rows = journaled(url)
    stored = set(floor.stored)
    lost = len(stored - set(rows))
    twice = sum(count - 1 for count in rows.values()) + len(floor.stored) - len(stored)
    double_awards = awarded_twice(url)
    recomputed = {pool: int(cents) for pool, cents in verified.get("pools", {}).items()}
    shown = followers.get("meters", {})
    meters_agree = bool(recomputed) and leader == recomputed and followers.get("shown") is True
    meters_agree = meters_agree and all(each == recomputed for each in shown.values())
    problems = [
        f"{name}: {value}"
        for name, value in (
            ("acked events lost", lost),
            ("events applied twice", twice),
            ("jackpots awarded twice", double_awards),
            ("display regressions", floor.regressions),
            ("progressive wagers while closed", len(floor.wagers_while_closed)),
            ("floor errors", len(floor.errors)),
            ("mystery reveals that do not check", revealed.unchecked),
        )
        if value
    ]
    if not revealed.balanced:
        problems.append("report: a pool does not reconcile")
    if not verified.get("ok"):
        problems.append(f"verify: {verified.get('problems')}")
    if not meters_agree:
        problems.append(f"meters: journal {recomputed}, leader {leader}, followers {followers}")
    return Findings(
        kind=fault.kind,
        target=fault.target,
        failover_s=failover_seconds(fault, floor.commits),
        stored=len(floor.stored),
        acked_events_lost=lost,
        events_applied_twice=twice,
        jackpots_awarded_twice=double_awards,
        display_regressions=floor.regressions,
        wagers_while_closed=len(floor.wagers_while_closed),
        chain_ok=bool(verified.get("ok")),
        meters_agree=meters_agree,
        epoch=epoch(url),
        awards=awards(url),
        mystery_hits=revealed.hits,
        reveals_unchecked=len(revealed.unchecked),
        problems=problems,
    )
