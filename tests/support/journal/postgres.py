"""A real PostgreSQL server for the journal's tests, and a fresh database for each test.

``postgres_server`` (session-scoped) runs ``initdb`` in a temporary directory and starts the
server with ``pg_ctl`` on a free loopback port: TCP on 127.0.0.1 only (no Unix socket), trust
authentication for the ``postgres`` superuser on loopback, and durability as production has
it (``fsync``, ``synchronous_commit`` and ``full_page_writes`` on). It is stopped when the
session ends, and its directory removed.

``postgres_url`` (per test) creates an empty database on that server and gives its
``postgresql://`` URL; the database is dropped after the test, whoever is still connected.

``initdb`` refuses to run as root. A test run as root (CI, the sessions' machines) runs
``initdb`` and the server as the ``postgres`` system user, which the Debian package creates,
through ``runuser``, in a directory made for it outside pytest's own temporary folders (those
are private to root). Run as anyone else, they run as that user.

There is no skipping: without PostgreSQL the fixture fails and says how to install it
(``make system-deps`` does). Set ``POSTGRES_BIN`` to the folder of another installation's
``initdb`` and ``pg_ctl``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import psycopg
import pytest
from psycopg import sql

from controller.journal.location import DatabaseUrl
from support.drivers.mosquitto import HOST, free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

DEFAULT_BIN: Final = Path("/usr/lib/postgresql/15/bin")
SERVICE_USER: Final = "postgres"
"""Who runs the server when the tests run as root (initdb refuses root)."""
START_TIMEOUT_S: Final = 30
INSTALL: Final = (
    "the PostgreSQL journal tests need a real server: apt-get install postgresql-15 "
    "(make system-deps does), or set POSTGRES_BIN to the folder holding initdb and pg_ctl"
)


def postgres_bin() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``: ``$POSTGRES_BIN``, else Debian's newest."""
    if configured := os.environ.get("POSTGRES_BIN"):
        return Path(configured)
    installed = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda found: (
            int(found.parent.parent.name) if found.parent.parent.name.isdigit() else 0
        ),
    )
    return installed[-1].parent if installed else DEFAULT_BIN


@dataclass
class PostgresServer:
    """One running PostgreSQL cluster on a loopback port."""

    directory: Path
    port: int
    host: str = HOST
    user: str = "postgres"
    _databases: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def data(self) -> Path:
        """The cluster's data directory."""
        return self.directory / "data"

    @property
    def log_file(self) -> Path:
        """The server's log."""
        return self.directory / "postgres.log"

    def log(self) -> str:
        """The server's log so far."""
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def url(self, database: str = "postgres") -> str:
        """The URL of one of its databases."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; its name."""
        name = f"journal_{os.getpid()}_{next(self._databases)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, ending its connections (a test may have left one open)."""
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def _as_server_user(command: list[str]) -> list[str]:
    """``command`` as the user the server runs as: ``postgres`` when we are root."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", SERVICE_USER, "--", *command]


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(_as_server_user(command), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(
            f"{what} failed ({done.returncode}):\n{done.stdout}{done.stderr}", pytrace=False
        )


def _server_directory() -> Path:
    """A directory the server's user owns (pytest's are private to whoever runs the tests)."""
    directory = Path(tempfile.mkdtemp(prefix="jackpotd-postgres-"))
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam(SERVICE_USER)
        except KeyError:
            shutil.rmtree(directory)
            pytest.fail(
                f"no {SERVICE_USER} system user to run the server as: {INSTALL}", pytrace=False
            )
        os.chown(directory, account.pw_uid, account.pw_gid)
    return directory


def start_server() -> PostgresServer:
    """A new cluster, initialised and started (see the module docstring)."""
    binaries = postgres_bin()
    if not (binaries / "initdb").is_file() or not (binaries / "pg_ctl").is_file():
        pytest.fail(f"initdb and pg_ctl not found in {binaries}: {INSTALL}", pytrace=False)
    server = PostgresServer(_server_directory(), free_port())
    _run(
        [str(binaries / "initdb"), "-D", str(server.data), "-U", server.user,
         "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions"],
        "initdb",
    )  # fmt: skip
    options = (
        f"-c listen_addresses={server.host} -c port={server.port} "
        "-c unix_socket_directories='' -c fsync=on -c synchronous_commit=on "
        "-c full_page_writes=on -c max_connections=50"
    )
    _run(
        [str(binaries / "pg_ctl"), "-D", str(server.data), "-l", str(server.log_file),
         "-o", options, "-w", "-t", str(START_TIMEOUT_S), "start"],
        f"pg_ctl start (log {server.log_file})",
    )  # fmt: skip
    return server


def stop_server(server: PostgresServer) -> None:
    """Stop the cluster (fast: connections closed, a clean shutdown) and remove its files."""
    command = [str(postgres_bin() / "pg_ctl"), "-D", str(server.data), "-m", "fast", "-w", "stop"]
    subprocess.run(_as_server_user(command), capture_output=True, check=False)
    shutil.rmtree(server.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster for the whole test session, stopped at its end."""
    server = start_server()
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of an empty database of its own, dropped after the test."""
    name = postgres_server.create_database()
    try:
        yield postgres_server.url(name)
    finally:
        with contextlib.suppress(psycopg.Error):
            postgres_server.drop_database(name)


@pytest.fixture
def database_url(postgres_url: str) -> DatabaseUrl:
    """The same empty database, as the journal names its location."""
    return DatabaseUrl(postgres_url)
