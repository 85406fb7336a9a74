"""The ``[controller]`` section: the site, its rules profile, its journal, keys and timings.

:func:`read_controller` checks every key of the section through the file's
:class:`~controller.config.values.Checker` (deploy/jackpotd.toml documents them) and returns the
:class:`~controller.config.schema.ControllerConfig` the daemon runs on.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Final

from controller.config.gaming_day import GamingDay, start_of, zone_of
from controller.config.schema import ControllerConfig, Jurisdiction
from controller.journal import location
from controller.journal.errors import JournalError
from controller.journal.high_water import high_water_path
from controller.journal.location import journal_location
from controller.ledger.jurisdictions import PROFILES
from controller.ledger.settlement import HitOrder
from controller.rules.ranking import AceFive
from controller.security.controller_key import CREDENTIALS

if TYPE_CHECKING:
    from controller.config.schema import RawController
    from controller.config.values import Checker
    from controller.journal.location import JournalLocation

_DYNASTY: Final = {"pa": ("pa", "pa-caption"), "nj": ("nj",)}
"""The Dynasty Bonus readings each jurisdiction allows, its default first (docs/rules.md 5.4)."""
MIN_CHECKPOINT_ROWS: Final = 100
MAX_CHECKPOINT_ROWS: Final = 1_000_000
"""Rows between checkpoints: fewer makes the journal mostly checkpoints, more a slow start-up."""
LEASE_S: Final = (1.0, 300.0)
"""The sequencer's lease: renewed thrice a lease, so shorter hammers the database; longer
delays a takeover after a node dies (docs/ha.md)."""
COMMIT_HANG_S: Final = (1.0, 3600.0)
MAX_HEAD_ROWS: Final = 10_000
MAX_SOCKET_PATH: Final = 107
"""The longest path a Unix socket may have (sun_path holds 108 bytes, the last a NUL)."""
HEAD_INTERVAL_S: Final = (0.05, 60.0)
"""Signed heads: how many acknowledged rows, and for how long, a rollback could drop unseen
(docs/security.md, "History never goes back"); more often costs a signature and an fsync."""


def read_controller(checks: Checker, raw: RawController) -> ControllerConfig:
    """The ``[controller]`` table, every key checked."""
    jurisdiction = checks.choice("controller.jurisdiction", raw.jurisdiction, Jurisdiction)
    ace_five = checks.choice("controller.ace_five", raw.ace_five, AceFive)
    if ace_five is AceFive.LOWEST and jurisdiction is not Jurisdiction.NJ:
        raise checks.fail(
            "controller.ace_five",
            "'lowest' is the NJ 13:69F-11(d) option; in PA A-2-3-4-5 is second-highest",
        )
    allowed = _DYNASTY[jurisdiction]
    dynasty = raw.dynasty_profile or allowed[0]
    if dynasty not in allowed:
        raise checks.fail(
            "controller.dynasty_profile",
            f"{dynasty!r} is not a {jurisdiction} profile; one of {', '.join(allowed)}",
        )
    if raw.tax_wager_multiple < 0:
        raise checks.fail("controller.tax_wager_multiple", "cannot be negative")
    dirs = []
    for index, folder in enumerate(raw.paytable_dirs):
        if not (path := checks.path(folder)).is_dir():
            raise checks.fail(f"controller.paytable_dirs[{index}]", f"no such folder: {path}")
        dirs.append(path)
    verification = raw.verification_amount
    journal = _journal(checks, raw.journal)
    node = _node(checks, raw.node)
    return ControllerConfig(
        site=checks.identifier("controller.site", raw.site),
        controller_id=checks.identifier("controller.id", raw.controller_id),
        journal=journal,
        jurisdiction=jurisdiction,
        ace_five=ace_five,
        dynasty_profile=dynasty,
        verification_cents=None
        if verification is None
        else checks.dollars("controller.verification_amount", verification, minimum=1),
        tax_threshold_cents=checks.dollars("controller.tax_threshold", raw.tax_threshold),
        tax_wager_multiple=raw.tax_wager_multiple,
        hit_order=checks.choice("controller.hit_order", raw.hit_order, HitOrder),
        heartbeat_timeout_s=checks.positive(
            "controller.heartbeat_timeout_s", raw.heartbeat_timeout_s
        ),
        paytable_dirs=tuple(dirs),
        dual_control_cents=checks.dollars(
            "controller.dual_control_amount", raw.dual_control_amount, minimum=1
        ),
        lockout_after=checks.count("controller.lockout_after", raw.lockout_after),
        pool_profile=_pool_profile(checks, raw.pool_profile),
        key_file=_key_file(checks, raw.key_file),
        sealing_key_file=_sealing_key_file(checks, raw.sealing_key_file, raw.key_file),
        signer_socket=_signer_socket(checks, raw.signer_socket, raw.key_file),
        operator_socket=_socket_path(checks, "controller.operator_socket", raw.operator_socket),
        operator_group=_group(checks, "controller.operator_group", raw.operator_group),
        checkpoint_rows=_checkpoint_rows(checks, raw.checkpoint_rows),
        checkpoint_interval_s=checks.positive(
            "controller.checkpoint_interval_s", raw.checkpoint_interval_s
        ),
        high_water_file=_high_water_file(checks, raw.high_water_file, journal, node),
        head_rows=_head_rows(checks, raw.head_rows),
        head_interval_s=checks.within(
            "controller.head_interval_s", raw.head_interval_s, HEAD_INTERVAL_S
        ),
        node=node,
        lease_s=checks.within("controller.lease_s", raw.lease_s, LEASE_S),
        commit_hang_s=checks.within("controller.commit_hang_s", raw.commit_hang_s, COMMIT_HANG_S),
        gaming_day=_gaming_day(checks, raw.gaming_day_start, raw.time_zone),
    )


def _gaming_day(checks: Checker, start: str, zone: str) -> GamingDay:
    """``gaming_day_start`` and ``time_zone``, each refused with its key and why."""
    try:
        begins = start_of(start)
    except ValueError as error:
        raise checks.fail("controller.gaming_day_start", str(error)) from error
    try:
        return GamingDay(begins, zone_of(zone))
    except ValueError as error:
        raise checks.fail("controller.time_zone", str(error)) from error


def _node(checks: Checker, text: str | None) -> str:
    """This node's id in the sequencer's fence: the host's name unless the file says."""
    if text is None:
        return socket.gethostname() or "jackpotd"
    return checks.dotted_identifier("controller.node", text)


def _journal(checks: Checker, text: str) -> JournalLocation:
    """The journal's file (relative to this file) or its ``postgresql://`` URL (docs/ha.md)."""
    try:
        return journal_location(text, checks.base_dir)
    except JournalError as error:
        raise checks.fail("controller.journal", str(error)) from None


def _key_file(checks: Checker, text: str | None) -> str | None:
    """The controller key's path, relative to this file; ``${CREDENTIALS_DIRECTORY}`` kept."""
    if text is None or text.startswith(CREDENTIALS):
        return text
    if not text.strip():
        raise checks.fail("controller.key_file", "names no file")
    return str(checks.path(text))


def _sealing_key_file(checks: Checker, text: str | None, key_file: str | None) -> str | None:
    """The sealing key's path, beside a ``key_file`` only (a signer holds its own)."""
    if text is None:
        return None
    key = "controller.sealing_key_file"
    if key_file is None:
        raise checks.fail(
            key, "only with key_file: with signer_socket the signer holds it (--sealing-key)"
        )
    if text.startswith(CREDENTIALS):
        return text
    if not text.strip():
        raise checks.fail(key, "names no file")
    return str(checks.path(text))


def _signer_socket(checks: Checker, text: str | None, key_file: str | None) -> str | None:
    """The signer's socket, relative to this file; never with ``key_file`` as well."""
    if text is None:
        return None
    key = "controller.signer_socket"
    if key_file is not None:
        raise checks.fail(key, "the key is the signer's or the service's: set it or key_file")
    return _socket_path(checks, key, text)


def _socket_path(checks: Checker, key: str, text: str | None) -> str | None:
    """A Unix socket's path, relative to this file, no longer than a socket's path may be."""
    if text is None:
        return None
    if not text.strip():
        raise checks.fail(key, "names no socket")
    path = str(checks.path(text))
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise checks.fail(
            key, f"{path} is longer than a Unix socket's path may be ({MAX_SOCKET_PATH} bytes)"
        )
    return path


def _pool_profile(checks: Checker, text: str | None) -> str | None:
    """A jurisdiction profile's name as the ledger knows it (any case), or None for none."""
    if text is None:
        return None
    names = {name.lower(): name for name in PROFILES}
    if (name := names.get(text.strip().lower())) is None:
        raise checks.fail(
            "controller.pool_profile", f"{text!r} is not one of {', '.join(PROFILES)}"
        )
    return name


def _group(checks: Checker, key: str, text: str | None) -> str | None:
    """A group's name as written (it is looked up where the daemon runs, when it starts)."""
    if text is None:
        return None
    if not text.strip() or text != text.strip():
        raise checks.fail(key, f"{text!r} is not a group's name")
    return text


def _high_water_file(
    checks: Checker, text: str | None, journal: JournalLocation, node: str
) -> str | None:
    """The high-water file's path, relative to this file.

    Unset, an SQLite journal keeps it beside its file (None here: the journal's path says
    where). A PostgreSQL journal has no folder of its own: its default is ``var/`` beside
    this file, never the working directory, which is whatever the caller's happens to be.
    """
    if text is None:
        if location.folder(journal) is None:
            return str(checks.base_dir / high_water_path(str(journal), node))
        return None
    if not text.strip():
        raise checks.fail("controller.high_water_file", "names no file")
    return str(checks.path(text))


def _head_rows(checks: Checker, rows: int) -> int:
    """Rows between signed heads."""
    if not 1 <= rows <= MAX_HEAD_ROWS:
        raise checks.fail(
            "controller.head_rows", f"must be from 1 to {MAX_HEAD_ROWS:,}, not {rows:,}"
        )
    return rows


def _checkpoint_rows(checks: Checker, rows: int) -> int:
    """Rows between checkpoints: start-up replays at most about this many."""
    if not MIN_CHECKPOINT_ROWS <= rows <= MAX_CHECKPOINT_ROWS:
        raise checks.fail(
            "controller.checkpoint_rows",
            f"must be from {MIN_CHECKPOINT_ROWS:,} to {MAX_CHECKPOINT_ROWS:,}, not {rows:,}",
        )
    return rows
