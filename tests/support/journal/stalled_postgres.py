"""A PostgreSQL server in strict synchronous mode with no standby: every ``COMMIT`` waits.

``stalled_postgres`` (per test) starts a cluster of its own
(:func:`support.journal.postgres.start_server`) and restarts it with ``synchronous_standby_names``
naming a standby that does not exist. That is exactly a Patroni primary in
``synchronous_mode_strict`` that has lost its standby: a transaction that wrote commits locally,
then waits in ``COMMIT`` for a standby's confirmation that never comes (a read-only one does not
wait). :meth:`StalledServer.release` takes the standby's name away and reloads the configuration, as
an operator (or Patroni) fixing it would: every waiting ``COMMIT`` then returns. A cluster of its
own, because this stalls every writer on it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import psycopg
import pytest

from support.journal.postgres import (
    SERVICE_USER,
    PostgresServer,
    postgres_bin,
    start_server,
    stop_server,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

GHOST: Final = "ghost_standby"
"""The synchronous standby named, which never connects."""
LOCAL: Final = "options=-c%20synchronous_commit%3Dlocal"
"""A URL query making a connection's commits not wait for the standby (for set-up)."""


@dataclass
class StalledServer:
    """A cluster whose commits wait for a standby, and one empty database on it."""

    server: PostgresServer
    database: str

    @property
    def url(self) -> str:
        """The database's URL: a connection's commits wait for the missing standby."""
        return self.server.url(self.database)

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        """A superuser connection whose own commits do not wait (autocommit)."""
        return psycopg.connect(
            self.server.url(self.database), autocommit=True, options="-c synchronous_commit=local"
        )

    def waiting_on_replication(self) -> list[str]:
        """The applications of the sessions now waiting in ``COMMIT`` for the standby."""
        with self.admin() as admin:
            rows = admin.execute(
                "SELECT application_name FROM pg_stat_activity WHERE wait_event = 'SyncRep'"
            ).fetchall()
        return [str(name) for (name,) in rows]

    def release(self) -> None:
        """No synchronous standby any more: the waiting commits return."""
        with self.admin() as admin:
            admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
            admin.execute("SELECT pg_reload_conf()")


def _restart(server: PostgresServer) -> None:
    command = [str(postgres_bin() / "pg_ctl"), "-D", str(server.data), "-w", "-m", "fast"]
    command += ["-l", str(server.log_file), "restart"]
    if os.geteuid() == 0:
        command = ["runuser", "-u", SERVICE_USER, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"pg_ctl restart failed:\n{done.stdout}{done.stderr}", pytrace=False)


@pytest.fixture
def stalled_postgres() -> Iterator[StalledServer]:
    """A cluster of its own whose commits wait for a standby that does not exist."""
    server = start_server()
    try:
        database = server.create_database()
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{GHOST}'")
        _restart(server)  # in force from the server's start: no reload to race with
        stalled = StalledServer(server, database)
        yield stalled
        # A test that failed before releasing leaves a COMMIT waiting in its commit thread:
        # released here, it returns, and the test's event loop can close.
        stalled.release()
    finally:
        stop_server(server)
