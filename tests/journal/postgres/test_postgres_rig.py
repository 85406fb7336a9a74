"""The PostgreSQL the journal's tests run on: real, durable, each test's database its own.

The rig is tests/support/journal/postgres.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg

if TYPE_CHECKING:
    from support.journal.postgres import PostgresServer


def test_the_test_server_is_a_real_postgresql_with_fsync_on_listening_on_loopback_only(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url) as connection:
        settings: dict[str, str] = dict(
            connection.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('fsync', 'synchronous_commit', 'full_page_writes', 'listen_addresses', "
                "'unix_socket_directories')"
            ).fetchall()
        )
        (version,) = connection.execute("SHOW server_version_num").fetchone() or ("0",)
    assert settings == {
        "fsync": "on",
        "synchronous_commit": "on",
        "full_page_writes": "on",
        "listen_addresses": "127.0.0.1",
        "unix_socket_directories": "",
    }
    assert int(version) >= 150000
    assert f"127.0.0.1:{postgres_server.port}/" in postgres_url


def test_each_test_gets_an_empty_database_of_its_own(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as connection:
        tables = connection.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        (name,) = connection.execute("SELECT current_database()").fetchone() or ("",)
    assert tables == (0,)
    assert postgres_url.endswith(f"/{name}")
    assert name.startswith("journal_")


def test_a_database_is_dropped_after_its_test_even_with_a_connection_left_open(
    postgres_server: PostgresServer,
) -> None:
    name = postgres_server.create_database()
    left_open = psycopg.connect(postgres_server.url(name))
    postgres_server.drop_database(name)
    with psycopg.connect(postgres_server.url()) as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    assert found is None
    assert left_open.closed or left_open.broken or _ended(left_open)


def _ended(connection: psycopg.Connection[object]) -> bool:
    try:
        connection.execute("SELECT 1")
    except psycopg.OperationalError:
        return True
    return False
