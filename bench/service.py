"""The daemon as an operator starts it: controller key, a manager, the approvals, ``jackpotd run``.

``jackpotd run`` refuses to start without the controller's signing key, on a journal whose
authority is not signed (no manager enrolled with a key), on a configuration no manager approved,
or on software whose manifest nobody approved (docs/operations.md, sections 2 and 3). So every
benchmark that runs the daemon readies its journal here, with the commands an operator runs
after installing, in the order docs/operations.md gives them:

1. ``jackpotd key generate``: the controller key the configuration names (``common.KEY_FILE``);
2. ``jackpotd operator key`` and ``operator add --role manager``: a manager, self-enrolled;
3. ``jackpotd config approve``: the pools and tables the configuration opens;
4. ``jackpotd manifest approve``: the software and configuration as installed.

They run in this process through the command line's own entry point (:func:`controller.cli.main`),
so nothing of what they do is copied here, and a change to what start-up requires shows at once
as a benchmark that no longer starts (its short form runs in ``make test``: tests/bench/).
:class:`Daemon` then runs ``jackpotd run --config FILE`` in its own process, as systemd does.

:class:`Journaled` reads what the daemon journaled as the reading commands do (read only,
through :mod:`controller.journal`'s own reads), never by the file's columns, which change with
its schema: the tables' events are counted by their devices' sequence numbers, so that the
rows the controller adds (checkpoints, a takeover) are not taken for the tables'.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Final

from common import KEY_FILE, REPO, stop_process

from controller.cli import main as jackpotd
from controller.config.load import load_config
from controller.effects import Contributed
from controller.events import BetsLocked
from controller.journal.sqlite.devices import read_highs
from controller.journal.sqlite.rows import rows_of_kinds, rows_with_ids
from controller.ledger_journal.sqlite import ReadOnlyJournal
from controller.ports import APPLIED

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from controller.journal.rows import Row

IDS_PER_READ: Final = 500
"""Event ids looked up per query (SQLite bounds the parameters of one statement)."""

MANAGER: Final = "bench-manager"
PASSPHRASE: Final = "benchmarks only, never for real money"  # noqa: S105 - the benchmark's own
"""The manager's passphrase: the benchmark's money is nobody's, so it is no secret."""


def approve_site(config: Path) -> None:
    """Ready the journal ``config`` names for ``jackpotd run``, as an operator does (see above).

    The commands' own output goes to ``<config>.operator.log``; one that fails raises with it.
    """
    folder = config.parent
    journal = str(load_config(config).controller.journal)
    manager_key = str(folder / f"{MANAGER}.key")
    passphrase = folder / f"{MANAGER}.passphrase"
    passphrase.write_text(PASSPHRASE + "\n", encoding="utf-8")
    passphrase.chmod(0o600)
    signed = ["--key", manager_key, "--passphrase-file", str(passphrase), "--db", journal]
    commands = [
        ["key", "generate", "--out", str(folder / KEY_FILE)],
        ["operator", "key", MANAGER, "--out", manager_key, "--passphrase-file", str(passphrase)],
        ["operator", "add", MANAGER, "--role", "manager", "--public-key", manager_key, *signed],
        ["config", "approve", "--config", str(config), *signed],
        ["manifest", "approve", "--config", str(config), *signed],
    ]
    log = config.with_suffix(".operator.log")
    for command in commands:
        with log.open("a", encoding="utf-8") as output, contextlib.redirect_stdout(output):
            print(f"$ jackpotd {' '.join(command)}")
            status = jackpotd(command)
        if status != 0:
            raise RuntimeError(
                f"jackpotd {' '.join(command[:2])} exited with {status}:\n{log.read_text()[-3000:]}"
            )


class Daemon:
    """``jackpotd run --config FILE`` in its own process (its log in ``<config>.log``).

    The first start readies the journal as an operator does (:func:`approve_site`).
    """

    def __init__(self, config: Path) -> None:
        self.config = config
        self.process: subprocess.Popen[bytes] | None = None
        self.approved = False

    def start(self) -> None:
        """Start the service (the caller waits for what tells it that it is ready)."""
        if not self.approved:
            approve_site(self.config)
            self.approved = True
        # JACKPOTD_BENCH_PROFILE=FILE runs the daemon under cProfile (its statistics in FILE).
        profile = os.environ.get("JACKPOTD_BENCH_PROFILE")
        profiler = ["-m", "cProfile", "-o", profile] if profile else []
        with self.config.with_suffix(".log").open("ab") as log:
            command = ["-m", "controller", "run", "--config", str(self.config)]
            self.process = subprocess.Popen(
                [sys.executable, *profiler, *command, "--log-level", "WARNING"],
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )

    @property
    def pid(self) -> int:
        """The service's process id."""
        if self.process is None:
            raise RuntimeError("the daemon is not running")
        return self.process.pid

    def check(self) -> None:
        """Raise if the service has exited."""
        if self.process is not None and self.process.poll() is not None:
            log = self.config.with_suffix(".log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"jackpotd exited with {self.process.returncode}:\n{log}")

    def stop(self) -> int:
        """SIGTERM: the service drains and exits 0."""
        if self.process is None:
            return 0
        code = stop_process(self.process)
        self.process = None
        return code


class Journaled:
    """The daemon's journal, read only, while it runs (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.journal = ReadOnlyJournal(path)
        self.connection = self.journal.reader.conn

    def rows(self) -> int:
        """The last committed row."""
        return self.journal.committed_seq()

    def device_events(self) -> int:
        """The events the tables' devices sent that are journaled (applied or refused).

        A device numbers its events 1, 2, 3...; the journal keeps each device's highest
        (``device_seqs``, docs/faults.md, "Lost events"), so their sum counts them.
        """
        return sum(read_highs(self.connection).values())

    def of_kind(self, kind: str) -> int:
        """How many rows of ``kind`` (an event's tag, e.g. ``table-status``) are journaled."""
        return sum(1 for _ in rows_of_kinds(self.connection, kind))

    def contributing_locks(self, event_ids: Iterable[str]) -> list[tuple[str, int]]:
        """Of these ids, the applied bets-locked that contributed to a pool: each id and row."""
        wanted = list(event_ids)
        found: list[tuple[str, int]] = []
        for start in range(0, len(wanted), IDS_PER_READ):
            for row in self.with_ids(wanted[start : start + IDS_PER_READ]):
                contributed = any(isinstance(effect, Contributed) for effect in row.effects or ())
                applied = row.values["outcome"] == APPLIED
                if isinstance(row.event, BetsLocked) and applied and contributed:
                    found.append((str(row.values["event_id"]), int(row.values["seq"])))
        return sorted(found, key=lambda lock: lock[1])

    def with_ids(self, event_ids: list[str]) -> Iterable[Row]:
        """The rows of those event ids (at most :data:`IDS_PER_READ`)."""
        return rows_with_ids(self.connection, event_ids)

    def close(self) -> None:
        """Release the connection."""
        self.journal.close()
