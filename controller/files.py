"""The files the service and the command line create, each at its mode whatever the umask.

Two modes (docs/operations.md, "Files and their modes"):

* :data:`SECRET` (0600) for keys: an operator's sealed key file, the controller's key;
* :data:`RECORD` (0640) for everything else written: the journal and its ``-wal``/``-shm``,
  archive segments, anchors files, a table agent's outbox and state, charts.
  Group-readable, so that the auditors' group reads them; never world-readable.

A file is opened with ``os.open(path, flags, mode)`` and then ``fchmod``'ed to the mode: the
mode given to ``open`` is masked by the process umask (a umask of 277 would leave a key its
owner cannot rewrite, one of 077 would hide a segment from the auditors), the ``fchmod`` is
not. A file written whole (created or truncated) always ends at
its mode; a file appended to keeps the mode it has, and is given the mode when this creates it.

An SQLite file is created empty at its mode before SQLite opens it (:func:`prepare_database`):
SQLite reads an empty file as a new database, and creates the ``-wal`` and ``-shm`` files
with the main file's permissions (its unix VFS ``fchmod``'s them too), so they follow.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO, Final

if TYPE_CHECKING:
    from pathlib import Path

SECRET: Final = 0o600
"""A key: its owner reads it, nobody else."""
RECORD: Final = 0o640
"""What the service records: its owner writes it, the auditors' group reads it."""

_WRITE: Final = os.O_WRONLY | os.O_CLOEXEC


def _opened(path: Path, flags: int, mode: int, *, empty: bool = False) -> int:
    """``os.open`` then ``fchmod`` to ``mode``, then emptied if ``empty`` (closed on failure).

    Emptied after the ``fchmod``, not by ``O_TRUNC``: a file whose mode cannot be set (another
    user's) is refused with its bytes intact.
    """
    descriptor = os.open(path, flags, mode)
    try:
        os.fchmod(descriptor, mode)
        if empty:
            os.ftruncate(descriptor, 0)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def create_file(path: Path, mode: int, *, exclusive: bool = False) -> BinaryIO:
    """``path`` opened to be written whole, at ``mode``: created, or emptied if it exists.

    ``exclusive``: refuse (:class:`FileExistsError`) a file that exists, never overwrite it.
    """
    flags = _WRITE | os.O_CREAT | (os.O_EXCL if exclusive else 0)
    return os.fdopen(_opened(path, flags, mode, empty=not exclusive), "wb")


def write_file(path: Path, data: bytes, mode: int, *, exclusive: bool = False) -> None:
    """Write ``data`` as the whole of ``path``, at ``mode`` (see :func:`create_file`)."""
    with create_file(path, mode, exclusive=exclusive) as file:
        file.write(data)


def append_file(path: Path, mode: int) -> BinaryIO:
    """``path`` opened to be appended to; created at ``mode`` if it does not exist.

    A file that exists keeps its mode: whoever made it chose it (a file written whole is not
    appended to, so it is at its mode already).
    """
    flags = _WRITE | os.O_APPEND
    while True:
        try:
            return os.fdopen(os.open(path, flags), "ab")
        except FileNotFoundError:
            pass
        try:
            return os.fdopen(_opened(path, flags | os.O_CREAT | os.O_EXCL, mode), "ab")
        except FileExistsError:  # made meanwhile by another writer: append to it
            continue


def prepare_database(path: Path, mode: int = RECORD) -> None:
    """Create the SQLite file ``path`` empty at ``mode`` if it does not exist yet.

    Before ``sqlite3.connect`` on a path that may be new, which would otherwise create the
    file at 0644 less the umask; its ``-wal`` and ``-shm`` then take the same mode.
    """
    try:
        descriptor = _opened(path, _WRITE | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return
    os.close(descriptor)
