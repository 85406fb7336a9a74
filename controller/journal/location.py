"""Where a journal is: an SQLite file, a PostgreSQL database, or a journal in memory.

An SQLite file is a path, a database a ``postgresql://`` URL, a journal in this process's
memory ``memory://NAME``.

The configuration's ``[controller] journal`` and every command's ``--db`` name one of them
(docs/ha.md). Text that starts ``postgresql://`` or ``postgres://`` is a URL, checked as
libpq reads it; ``memory://NAME`` names the in-memory journal ``NAME`` (a name of letters,
digits, ``.``, ``_`` and ``-``; :mod:`controller.journal.memory`); any other URL
(``mysql://...``, ``sqlite://...``) is refused, rather than taken for a relative path and
made a file named ``mysql:``; anything else is an SQLite file's path (``memory:x`` too: a
colon alone is no URL, a file may be named so).

A URL may carry a password; the journal's messages and logs show it as
:meth:`DatabaseUrl.__str__` gives it, the password replaced by ``***`` (docs/ha.md says where a
password belongs instead: libpq's password file).

Every location has a scheme (:func:`scheme`): ``sqlite`` for a file's path, ``postgresql``
for a database's URL, ``memory`` for a journal in memory.
:func:`controller.journal.backends.backend_for` chooses the journal's backend by it and nothing
else asks which kind a location is; the few facts the configuration and the demo
need of a location whatever its backend (:func:`folder`, :func:`name`, :func:`text`) are
given here. psycopg is imported only when a URL is read: an SQLite journal never loads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Final
from urllib.parse import urlsplit, urlunsplit

from controller.journal.errors import JournalError

SQLITE: Final = "sqlite"
"""The scheme of an SQLite journal: a location that is a file's path."""
POSTGRESQL: Final = "postgresql"
"""The scheme of a PostgreSQL journal: a database's URL."""
MEMORY: Final = "memory"
"""The scheme of an in-memory journal: ``memory://NAME``."""
SCHEMES: Final = ("postgresql", "postgres")
"""The URL schemes libpq reads as a PostgreSQL connection."""
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
"""Anything of the shape ``scheme://``: a URL, never a file's path."""
_MEMORY_NAME: Final = re.compile(r"[A-Za-z0-9._-]{1,200}")
"""What may name an in-memory journal (``memory://NAME``)."""


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A PostgreSQL database, as a ``postgresql://`` URL (libpq's connection URI)."""

    url: str
    scheme: ClassVar[str] = POSTGRESQL

    def __str__(self) -> str:
        """The URL with its password (if any) replaced by ``***``: what messages show."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))

    @property
    def database(self) -> str:
        """The database's name (libpq's default, the user's name, when the URL gives none)."""
        from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - only for a database

        settings = conninfo_to_dict(self.url)
        return str(settings.get("dbname") or settings.get("user") or "")


@dataclass(frozen=True, slots=True)
class MemoryLocation:
    """A journal in this process's memory: ``memory://NAME`` (:mod:`controller.journal.memory`)."""

    name: str
    scheme: ClassVar[str] = MEMORY

    def __str__(self) -> str:
        """``memory://NAME``: what messages show, and what ``--db`` takes."""
        return f"{MEMORY}://{self.name}"


JournalLocation = Path | DatabaseUrl | MemoryLocation
"""An SQLite journal's file, a PostgreSQL journal's database, or an in-memory journal."""


def scheme(location: JournalLocation) -> str:
    """The location's scheme: :data:`SQLITE` for a file, else the URL's (:data:`POSTGRESQL`)."""
    return SQLITE if isinstance(location, Path) else location.scheme


def sqlite_file(location: JournalLocation) -> Path | None:
    """The SQLite file a location names; None if it names another backend's journal."""
    return location if isinstance(location, Path) else None


def database(location: JournalLocation) -> DatabaseUrl | None:
    """The PostgreSQL database a location names; None if it names another backend's journal."""
    return location if isinstance(location, DatabaseUrl) else None


def folder(location: JournalLocation) -> Path | None:
    """The folder the journal's own files sit in (an SQLite file's); None: a database's has none."""
    return location.parent if isinstance(location, Path) else None


def name(location: JournalLocation) -> str:
    """What files kept for the journal are named after: a file's stem, a database's name."""
    if isinstance(location, MemoryLocation):
        return location.name
    return location.stem if isinstance(location, Path) else location.database


def text(location: JournalLocation) -> str:
    """The location as ``[controller] journal`` and ``--db`` take it (a URL with its password)."""
    if isinstance(location, MemoryLocation):
        return str(location)
    return location.as_posix() if isinstance(location, Path) else location.url


def is_url(text: str) -> bool:
    """Whether ``text`` has the shape of a URL (``scheme://``), whatever the scheme."""
    return bool(_URL.match(text))


def database_url(text: str) -> DatabaseUrl:
    """A ``postgresql://`` URL, checked; :class:`JournalError` (one line) if it is not one."""
    scheme = text.partition("://")[0].lower()
    if scheme not in SCHEMES:
        raise JournalError(
            f"{scheme}://...: not a journal location: give an SQLite file's path, a "
            "postgresql:// URL or memory://NAME"
        )
    import psycopg  # noqa: PLC0415 - psycopg is loaded for a database's journal only
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - the same

    try:
        conninfo_to_dict(text)
    except psycopg.ProgrammingError as error:
        # libpq's message may quote the URL, password and all: only its first words are shown.
        reason = str(error).split(":")[0].strip() or "not a connection URL"
        raise JournalError(f"{scheme}://...: not a PostgreSQL URL libpq reads ({reason})") from None
    return DatabaseUrl(text)


def memory_location(text: str) -> MemoryLocation:
    """``memory://NAME``, checked; :class:`JournalError` (one line) if the name is not one."""
    name = text.partition("://")[2]
    if not _MEMORY_NAME.fullmatch(name):
        raise JournalError(
            f"{text[:80]}: not an in-memory journal's name (memory://NAME: letters, digits, "
            "'.', '_' and '-')"
        )
    return MemoryLocation(name)


def journal_location(text: str, base: Path | None = None) -> JournalLocation:
    """What ``text`` names (see the module docstring); a relative path is taken from ``base``."""
    if text.partition("://")[0].lower() == MEMORY and is_url(text):
        return memory_location(text)
    if is_url(text):
        return database_url(text)
    path = Path(text).expanduser()
    return path if base is None else base / path
