"""A file's permission bits, and a process umask set for the length of a test.

docs/operations.md, "Files and their modes": what the service writes is 0600 (keys) or 0640
(everything else) whatever the umask; the tests write each under umask 000 (which would leave a
file world-writable) and 077 (which would hide it from the auditors' group).
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

UMASKS = (0o000, 0o077)
"""The umasks each writer is run under."""


def mode_of(path: Path) -> int:
    """``path``'s permission bits (0640, not 0o100640)."""
    return stat.S_IMODE(path.stat().st_mode)


@contextmanager
def process_umask(mask: int) -> Iterator[int]:
    """The process umask set to ``mask``, the one before put back after."""
    before = os.umask(mask)
    try:
        yield mask
    finally:
        os.umask(before)
