"""The sealed draws' file: one JSON map, mode 0600, replaced atomically, and a log of views.

The signer process keeps it in its own state folder, beside its marks (``--sealed``, by
default ``mystery.json`` next to ``--state``; controller/cli/signer.py), so that the triggers
survive a restart of the signer and a shell as the service user can neither read nor write
them.

* :meth:`SealedFile.write` replaces the whole map: written to a staged name at mode 0600
  (``fchmod``, whatever the umask) and renamed over the old one, so a crash leaves the old
  state or the new, never half of one; flushed to the disk first for a draw and a spend.
* :meth:`SealedFile.note` records a draw's new view of the meter (the highest asked, after a
  "not yet") by appending one line to the **views log** beside it (``mystery.json.views``,
  0600), written but not flushed: a contribution costs an append of some 100 bytes, not a
  rewrite of every level's draw. Every :data:`COMPACT_AFTER` lines the map is written again
  with the views in it and the log emptied. :meth:`SealedFile.read` replays the log over the
  map: a line of another draw than the map's, below the view the map holds, or torn by a crash
  is passed over, so a crash between the rewrite and the emptying changes nothing.

A keeper killed keeps every view it answered (the lines are in the kernel's cache before the
answer leaves); one whose machine lost power may come back behind the daemon, which the
daemon's client allows (controller/mystery/keeper.py, :func:`~controller.mystery.keeper.probed`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

import msgspec

from controller.files import SECRET
from controller.mystery.core import Meter, MysteryInputError, Sealed

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

COMPACT_AFTER: Final = 4_096
"""Views logged before the map is written again and the log emptied."""

_SEALED: Final = msgspec.json.Decoder(dict[str, Sealed])


class View(msgspec.Struct, frozen=True, array_like=True):
    """One line of the views log: the level's slot, its draw, the highest meter asked."""

    slot: str
    draw: int
    meter: Meter


_VIEW: Final = msgspec.json.Decoder(View)


class SealedFile:
    """The file of a keeper's sealed draws, and the log of their views beside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.views = path.with_name(f"{path.name}.views")
        self._log: int | None = None
        self._logged = 0

    def read(self) -> dict[str, Sealed]:
        """The draws kept, their views replayed (none if the file is not there yet)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            sealed = _SEALED.decode(data)
        except msgspec.MsgspecError as error:
            raise MysteryInputError(f"{self.path}: not a sealed draws file: {error}") from error
        try:
            lines = self.views.read_bytes().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                view = _VIEW.decode(line)
            except msgspec.MsgspecError:
                continue  # a line torn by a crash: it was never answered
            held = sealed.get(view.slot)
            if held is None or held.drawn.draw != view.draw or held.hit is not None:
                continue
            if held.last is None or view.meter.exact() > held.last.exact():
                sealed[view.slot] = msgspec.structs.replace(held, last=view.meter)
        self._logged = len(lines)
        return sealed

    def write(self, sealed: Mapping[str, Sealed], *, durable: bool) -> None:
        """Replace the file with ``sealed`` and empty the log; flushed first if ``durable``."""
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
        if self._log is not None or self.views.exists():
            os.ftruncate(self._opened(), 0)
        self._logged = 0

    def note(self, sealed: Mapping[str, Sealed], slot: str) -> None:
        """Log ``slot``'s new view (its draw's ``last``); every so often write the map again."""
        if self._logged >= COMPACT_AFTER:
            self.write(sealed, durable=False)
            return
        held = sealed[slot]
        if held.last is None:  # pragma: no cover - a view is noted after a query only
            return
        line = msgspec.json.encode(View(slot, held.drawn.draw, held.last)) + b"\n"
        os.write(self._opened(), line)
        self._logged += 1

    def _opened(self) -> int:
        if self._log is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
            self._log = os.open(self.views, flags, SECRET)
            os.fchmod(self._log, SECRET)
        return self._log

    def close(self) -> None:
        """Close the views log (the next note opens it again)."""
        if self._log is not None:
            os.close(self._log)
            self._log = None
