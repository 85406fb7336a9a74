"""A month of play at one table, journaled, and the report commands of docs/operations.md run on it.

November 2026 at one table: 16 rounds a day, four seats each staking $1 on the progressive and
$5 on the Fortune Bonus, the hands dealt from a shuffled 53-card deck (seeded: the same month
each run). :func:`documented` reads a section's shell block of docs/operations.md and
:func:`run_line` runs a line of it as an operator types it, the journal found through
``$JACKPOTD_DB``.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from controller.events import AnyEvent, RoundSettled, TableConfigured, WagerLocked
from controller.ledger_journal.sqlite import Journal
from support.journal.journal_rig import POOL, TABLE, pool_opened

if TYPE_CHECKING:
    from collections.abc import Iterator

PAGE = Path(__file__).resolve().parents[3] / "docs" / "operations.md"
DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"] + ["Jk"]
ROUNDS_A_DAY, SEATS, DAYS = 16, 4, 30
NOVEMBER = datetime(2026, 11, 1, 8, tzinfo=UTC)


def seed_paytable(name: str) -> str:
    """A seed paytable's TOML."""
    return (files("controller") / "paytables" / f"{name}.toml").read_text()


def month(days: int = DAYS) -> Iterator[AnyEvent]:
    """The month's events (its first ``days``), the pool and the table configured the day before."""
    yield msgspec.structs.replace(pool_opened(), at="2026-10-31T12:00:00Z")
    yield TableConfigured(
        "table-1", "2026-10-31T12:00:00Z", TABLE,
        {"progressive-1": seed_paytable("progressive-1"), "fortune-1": seed_paytable("fortune-1")},
        progressive="progressive-1", bonus="fortune-1", pool_id=POOL, envy_includes_dealer=False,
    )  # fmt: skip
    shuffler = random.Random(20261101)  # noqa: S311 - dealing the test's hands
    for day in range(days):
        for number in range(ROUNDS_A_DAY):
            at = (NOVEMBER + timedelta(days=day, minutes=30 * number)).isoformat()
            round_id = f"d{day + 1}-r{number + 1}"
            for seat in range(1, SEATS + 1):
                for spot, cents in (("progressive", 100), ("bonus", 500)):
                    wager_id = f"{round_id}-{spot}-{seat}"
                    yield WagerLocked(wager_id, at, TABLE, round_id, seat, spot, cents)
            cards = shuffler.sample(DECK, 7 * (SEATS + 1))
            hands = {str(seat): cards[7 * seat : 7 * seat + 7] for seat in range(1, SEATS + 1)}
            yield RoundSettled(f"{round_id}-settle", at, TABLE, round_id, cards[:7], hands)


def journal_month(path: Path, events: list[AnyEvent] | None = None) -> Path:
    """Journal the month (or ``events``) at ``path``; every event must be applied."""
    events = list(month()) if events is None else events
    with Journal(path) as opened:
        for start in range(0, len(events), 500):
            receipts = opened.append_many(events[start : start + 500])
            refused = [receipt for receipt in receipts if not receipt.applied]
            assert not refused, refused[:1]
    return path


def documented(section: str) -> list[str]:
    """The lines of the first shell block of a section of docs/operations.md."""
    text = PAGE.read_text(encoding="utf-8").split(section, 1)[1].split("\n#", 1)[0]
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert block is not None, section
    return [line for line in block.group(1).splitlines() if line.strip()]


def run_line(line: str, folder: Path, journal: Path) -> subprocess.CompletedProcess[str]:
    """Run a shell line in ``folder`` as an operator would, on ``journal``."""
    environment = os.environ | {
        "JACKPOTD_DB": str(journal),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TZ": "UTC",
    }
    return subprocess.run(  # noqa: S602 - the documented line, as an operator types it
        line, shell=True, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
