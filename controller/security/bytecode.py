"""The service runs with no bytecode cache, so that a planted ``.pyc`` is never read.

Python imports ``__pycache__/<module>.cpython-311.pyc`` in place of a module's source whenever
the cache's header names the source's modification time and size; it never compares the code
with the source. Whoever can write a ``__pycache__`` folder could therefore run code of their
choosing that no digest of the sources shows (docs/faults.md "A planted .pyc").

So the service reads and writes no bytecode cache at all: ``PYTHONDONTWRITEBYTECODE`` writes
none, and ``PYTHONPYCACHEPREFIX`` moves the cache the import system looks for to a folder
under ``/dev/null``, a path that no one, root included, can create. The ``__pycache__`` folders
beside the sources (the controller's, its dependencies' and the standard library's) are then
never opened, and every module is compiled from the source that the manifest covers.
``PYTHONSAFEPATH`` keeps the working folder, and ``PYTHONNOUSERSITE`` the user's
``~/.local`` site folder, off the import path: the service user's home and working folder are
its state folder, which it may write.

The unit sets these for the whole process (systemd/jackpotd.service), so that they hold from
the interpreter's first import. ``jackpotd run`` started any other way starts itself again
with the same settings (as interpreter options) before it does anything else.
"""

from __future__ import annotations

import os
import sys
from typing import Final, NoReturn

NOWHERE: Final = "/dev/null/jackpotd-pycache"
ENVIRONMENT: Final = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": NOWHERE,
    "PYTHONSAFEPATH": "1",
    "PYTHONNOUSERSITE": "1",
}
OPTIONS: Final = ("-B", "-P", "-s", "-X", f"pycache_prefix={NOWHERE}")
"""The same settings as interpreter options (they hold even under ``-E`` or ``-I``)."""


def uncached() -> bool:
    """Whether no bytecode cache is read or written and no writable folder is imported from."""
    return (
        sys.dont_write_bytecode
        and sys.pycache_prefix == NOWHERE
        and bool(sys.flags.safe_path)
        and bool(sys.flags.no_user_site)
    )


def restarted() -> bool:
    """Whether this interpreter was started with :data:`OPTIONS` (by :func:`restart_uncached`)."""
    return f"pycache_prefix={NOWHERE}" in sys.orig_argv


def restart_uncached() -> NoReturn:
    """Replace this process with the same command on an interpreter that reads no cache."""
    # The same interpreter and arguments, no shell: nothing is parsed again.
    os.execv(sys.executable, [sys.executable, *OPTIONS, *sys.orig_argv[1:]])  # noqa: S606
