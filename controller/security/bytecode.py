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

The unit starts the interpreter with the same settings as options, isolated and without
``site`` (``-I -S -B -X pycache_prefix=...``, systemd/jackpotd.service), on the launcher
``controller/__main__.py`` named by its path (docs/security.md section 2.4: no ``PYTHON*``
variable, ``.pth`` file or ``sitecustomize`` runs before the self-check). The environment
settings stay in the unit as well, for a ``jackpotd`` started from it another way.
``jackpotd run`` started any other way starts itself again, the same way, before it does
anything else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Final, NoReturn

NOWHERE: Final = "/dev/null/jackpotd-pycache"
ENVIRONMENT: Final = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": NOWHERE,
    "PYTHONSAFEPATH": "1",
    "PYTHONNOUSERSITE": "1",
}
OPTIONS: Final = ("-I", "-S", "-B", "-X", f"pycache_prefix={NOWHERE}")
"""The service's interpreter options: isolated (``-I``: no ``PYTHON*`` variables, no user site
folder, no script folder on the path), no ``site`` (``-S``: no ``.pth`` file, no
``sitecustomize``), and the cache settings, which ``-I`` would otherwise drop with the variables.
"""
LAUNCHER: Final = Path(os.path.abspath(__file__)).parent.parent / "__main__.py"  # noqa: PTH100
"""The launcher the service is started on, by its path (``-m`` needs ``site``)."""


def uncached() -> bool:
    """Whether the interpreter was started as the service is (:data:`OPTIONS`).

    No bytecode cache read or written, no writable folder imported from, isolated, no ``site``.
    """
    return (
        sys.dont_write_bytecode
        and sys.pycache_prefix == NOWHERE
        and bool(sys.flags.safe_path)
        and bool(sys.flags.no_user_site)
        and bool(sys.flags.isolated)
        and bool(sys.flags.no_site)
    )


def restarted() -> bool:
    """Whether this interpreter was started with :data:`OPTIONS` (by :func:`restart_uncached`)."""
    return f"pycache_prefix={NOWHERE}" in sys.orig_argv


def restart_uncached() -> NoReturn:
    """Replace this process with the same command, started as the unit starts the service."""
    # The same interpreter and arguments, no shell: nothing is parsed again.
    command = [sys.executable, *OPTIONS, str(LAUNCHER), *sys.argv[1:]]
    os.execv(sys.executable, command)  # noqa: S606
