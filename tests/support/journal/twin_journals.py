"""One history in two journals: an SQLite file and a PostgreSQL database, event for event.

``Twins`` appends every event to both backends and checks that each gives the same receipt, so
that whatever a command prints of one it must print of the other. ``site_history`` plays a
site whose authority is signed (tests/support/ledger/approvals.py: a manager and two supervisors
with key files), its configuration approved, and rounds with jackpots: one awaiting
verification at the dual-control amount, one verified, a documented adjustment, a refused
unsigned event and a signed checkpoint with its snapshot. ``database_fingerprint`` is what a
read-only command must leave as it was: every table's rows, digested, and the journal's head.

Import it as ``from support.journal.twin_journals import ...`` (tests/ is on the path).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

import psycopg
from psycopg import sql

from controller.config.load import load_config
from controller.events import HitVerified, MeterAdjusted, RoundSettled, WagerLocked
from controller.journal.checkpoints import seal
from controller.journal.location import DatabaseUrl
from controller.ledger.domain import LEDGER
from controller.ledger_journal.postgres import PostgresJournal
from controller.ledger_journal.sqlite import Journal
from support.drivers.mosquitto import free_port
from support.ledger.approvals import Appends, Site
from support.runtime.controller_keys import KEY_LINE, write_controller_key

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.journal.checkpoints import Sealed
    from controller.journal.domain import Domain
    from controller.ledger.apply import LedgerState
    from controller.ports import Receipt
    from controller.security.controller_key import ControllerKey

AT: Final = "2026-11-29T15:00:00Z"
LATER: Final = "2026-11-30T15:00:00Z"
FIVE_ACES: Final = ["As", "Ah", "Ad", "Ac", "Jk", "4d", "7c"]
STRAIGHT_FLUSH: Final = ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h"]
NOTHING: Final = ["2c", "5d", "7s", "9c", "Jd", "Ks", "3h"]
DEALER: Final = ["2d", "4c", "6s", "8d", "Tc", "Qc", "3s"]
PENDING: Final = "s-R1/1/progressive"
"""The five-aces payout of the history, awaiting verification ($1,000.02)."""
VERIFIED: Final = "s-R3/2/progressive"
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def write_config(folder: Path) -> Path:
    """One pool and one table; verification at $1,000, dual control at $5,000, lockout at 3."""
    write_controller_key(folder)
    config = folder / "jackpotd.toml"
    config.write_text(
        f'[controller]\nsite = "s"\nid = "c"\njournal = "journal.db"\n{KEY_LINE}'
        'verification_amount = "$1,000"\ndual_control_amount = "$5,000"\nlockout_after = 3\n\n'
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f"[web]\nport = {free_port()}\n\n[simulator]\nround_interval_s = 0.05\n"
    )
    return config


@dataclass
class Twins:
    """An SQLite journal and a PostgreSQL journal given the same events (module docstring)."""

    file: Journal
    database: PostgresJournal

    @classmethod
    def open(cls, path: Path, url: str) -> Twins:
        """A journal file at ``path`` and one in the database at ``url``."""
        return cls(Journal(path), PostgresJournal(DatabaseUrl(url)))

    @property
    def state(self) -> LedgerState:
        """The ledger's state (the same in both)."""
        return self.file.state

    @property
    def domain(self) -> Domain[LedgerState]:
        """What both replay their rows with."""
        return self.file.domain

    @property
    def head(self) -> tuple[int, str]:
        """The last row: the same in both."""
        assert self.file.head == self.database.head
        return self.file.head

    def append_many(self, events: list[AnyEvent], **options: Any) -> list[Receipt]:
        """Journal ``events`` in both; each must give the same receipts."""
        receipts = self.file.append_many(events, **options)
        assert self.database.append_many(events, **options) == receipts
        return receipts

    def append(self, event: AnyEvent) -> Receipt:
        """Journal one event in both."""
        return self.append_many([event])[0]

    def close(self) -> None:
        """Close both."""
        self.file.close()
        self.database.close()


def played(round_id: str, hand: list[str], seat: int = 1, at: str = AT) -> list[AnyEvent]:
    """A $1 progressive wager on ``seat`` and the round settled with ``hand`` on that seat."""
    return [
        WagerLocked(f"w-{round_id}", at, "T1", round_id, seat, "progressive", 100),
        RoundSettled(f"s-{round_id}", at, "T1", round_id, DEALER, {str(seat): hand}),
    ]


class Histories(Appends, Protocol):
    """What :func:`site_history` writes to: ``Twins``, or a single journal."""

    @property
    def head(self) -> tuple[int, str]:
        """The last row's ``seq`` and ``hash``."""

    def append_many(
        self, events: list[AnyEvent], *, snapshot: Sealed | None = None
    ) -> list[Receipt]:
        """Journal ``events`` in one transaction."""


H = TypeVar("H", bound=Histories)


def site_history(twins: H, config: Path, key: ControllerKey) -> Site[H]:
    """The history of the module docstring, in both journals; the site that signed it."""
    site = Site.create(twins)  # Twins appends as a Journal does
    site.approve(load_config(config))
    signed = [site.sign(event, "sup1") for event in played("R1", FIVE_ACES)]
    signed += [site.sign(event, "sup1") for event in played("R2", NOTHING, seat=3)]
    signed += [site.sign(event, "sup2") for event in played("R3", STRAIGHT_FLUSH, seat=2)]
    twins.append_many(signed)
    assert twins.append(
        site.sign(HitVerified("v-R3", AT, VERIFIED, "sup2"), "sup2", "sup1")
    ).applied
    adjust = MeterAdjusted("a-1", LATER, "P1", "meter", 1_234, "sup1", "sign test, ticket 4711")
    assert twins.append(site.sign(adjust, "sup1", "sup2")).applied
    refused = twins.append(MeterAdjusted("a-2", LATER, "P1", "reserve", 5_000_000, "sup1", "x"))
    assert not refused.applied
    sealed = seal(key, "c", twins.state, twins.head, LATER, domain=LEDGER)
    twins.append_many([sealed.event], snapshot=sealed)
    twins.append_many([site.sign(event, "sup1") for event in played("R4", NOTHING, at=LATER)])
    return site


def same_output(text: str, location: str) -> str:
    """A command's output with the journal's name and the new events' ids made comparable."""
    return _UUID.sub("UUID", text.replace(location, "JOURNAL"))


def database_fingerprint(url: str) -> dict[str, object]:
    """Every table of the database and a digest of its rows, in order; the journal's head."""
    with psycopg.connect(url, autocommit=True) as connection:
        names = [
            str(name)
            for (name,) in connection.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() ORDER BY table_name"
            )
        ]
        digests: dict[str, object] = {}
        for name in names:
            query = sql.SQL(
                "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) "
                "FROM {} t"
            ).format(sql.Identifier(name))
            digests[name] = connection.execute(query).fetchone()
        if "journal" in names:
            digests["head"] = connection.execute(
                "SELECT seq, encode(hash, 'hex') FROM journal ORDER BY seq DESC LIMIT 1"
            ).fetchone()
    return digests
