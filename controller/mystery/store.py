"""The sealed draws' file: one JSON map, mode 0600, replaced atomically, flushed when it matters.

The signer process keeps it in its own state folder, beside its marks (``--sealed``, by
default ``mystery.json`` next to ``--state``; controller/cli/signer.py), so that the triggers
survive a restart of the signer and a shell as the service user can neither read nor write
them. The file is written to a staged name at mode 0600 (``fchmod``, whatever the umask) and
renamed over the old one, so a crash leaves the old state or the new, never half of one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

import msgspec

from controller.files import SECRET
from controller.mystery.core import MysteryInputError, Sealed

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

_SEALED: Final = msgspec.json.Decoder(dict[str, Sealed])


class SealedFile:
    """The file of a keeper's sealed draws."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Sealed]:
        """The draws kept (none if the file is not there yet)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            return _SEALED.decode(data)
        except msgspec.MsgspecError as error:
            raise MysteryInputError(f"{self.path}: not a sealed draws file: {error}") from error

    def write(self, sealed: Mapping[str, Sealed], *, durable: bool) -> None:
        """Replace the file with ``sealed``; flushed to the disk first if ``durable``."""
        staged = self.path.with_name(f".{self.path.name}.new")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
        descriptor = os.open(staged, flags, SECRET)
        try:
            os.fchmod(descriptor, SECRET)
            os.write(descriptor, msgspec.json.encode(dict(sealed)))
            if durable:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
        staged.replace(self.path)
        if durable:
            folder = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
