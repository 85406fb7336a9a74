"""Lost events, found end to end: each device's sequence numbers, watched for gaps.

A device numbers its events 1, 2, 3... and never uses a number twice (docs/mqtt.md, the
serial protocol in :mod:`drivers.serial.protocol`); its heartbeats count apart, and say in
``last`` the number of the last event it sent. An event can be lost where no acknowledgement
covers it: a broker whose queue for the controller overflowed drops messages it had already
acknowledged to the table, and a message published before the controller's first subscription
reaches nobody. Then the number is simply never seen. This module watches the numbers:

* an event whose number jumps ahead (``seq`` above the highest seen plus one) leaves the
  numbers in between *missing*; a heartbeat whose ``last`` is above the highest seen does too
  (the events at the end never arrived);
* a missing number that arrives later (a resend, or a reordering on a serial link with
  several frames in flight) is no longer missing;
* a number still missing at the heartbeat *after* the one that first found it missing, so a
  whole heartbeat interval later, is **lost**: :meth:`DeviceSequences.heartbeat` returns it as
  a :class:`Gap`, once, and the sequencer journals it as a fault (``sequence-gap``) with an
  alert.

A number used twice with other content is the journal's to find
(:mod:`controller.journal.identity`). At start-up the watch resumes from the highest number the
journal holds for each device (:mod:`controller.journal.devices`); numbers missing before a
restart are not carried over (docs/faults.md says so).

A device is hostile too: the numbers it may leave missing are kept as a few ranges, not one
entry each, and a table may bring at most :data:`MAX_NEW_DEVICES` new device names per run.
The module is pure (no clock, no I/O).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from controller.events import FaultRecorded

if TYPE_CHECKING:
    from collections.abc import Mapping

SEQUENCE_GAP: Final = "sequence-gap"
"""The reason of the fault a gap is journaled as."""
MAX_RANGES: Final = 32
"""Missing ranges kept per device; beyond, the oldest are declared lost at the next heartbeat."""
MAX_NEW_DEVICES: Final = 64
"""New device names a table may bring in one run before more are no longer watched."""

Range = tuple[int, int]
"""A run of sequence numbers, first and last included."""


@dataclass(frozen=True, slots=True)
class Gap:
    """Events a device sent and the controller never received: ``first`` to ``last``."""

    table_id: str
    device: str
    first: int
    last: int

    @property
    def count(self) -> int:
        """How many events are lost."""
        return self.last - self.first + 1

    def fault(self, at: str) -> FaultRecorded:
        """The fault journaled for it; its id makes a second report of the same gap a duplicate."""
        numbers = str(self.first) if self.count == 1 else f"{self.first} to {self.last}"
        return FaultRecorded(
            f"{self.table_id}/{self.device}/gap/{self.first}-{self.last}",
            at,
            f"table {self.table_id}",
            SEQUENCE_GAP,
            f"device {self.device} sent events {numbers} ({self.count} in all), "
            "which never reached the controller",
        )


def _without(ranges: list[Range], seq: int) -> list[Range]:
    """``ranges`` less the number ``seq``."""
    kept: list[Range] = []
    for first, last in ranges:
        if first <= seq <= last:
            kept += [(a, b) for a, b in ((first, seq - 1), (seq + 1, last)) if a <= b]
        else:
            kept.append((first, last))
    return kept


def _common(ranges: list[Range], others: list[Range]) -> list[Range]:
    """The numbers in both lists of ranges."""
    common = []
    for first, last in ranges:
        for other_first, other_last in others:
            low, high = max(first, other_first), min(last, other_last)
            if low <= high:
                common.append((low, high))
    return sorted(common)


def _less(ranges: list[Range], taken: list[Range]) -> list[Range]:
    """``ranges`` less every number in ``taken``."""
    left = list(ranges)
    for low, high in taken:
        cut: list[Range] = []
        for first, last in left:
            cut += [(a, b) for a, b in ((first, min(last, low - 1)), (max(first, high + 1), last))]
        left = [(a, b) for a, b in cut if a <= b]
    return left


@dataclass(slots=True)
class _Device:
    high: int = 0
    """The highest number seen (devices count from 1)."""
    missing: list[Range] = field(default_factory=list)
    suspect: list[Range] = field(default_factory=list)
    """What was missing at the last heartbeat: lost if still missing at the next."""
    dropped: list[Range] = field(default_factory=list)
    """Holes past :data:`MAX_RANGES`, declared lost at the next heartbeat."""


class DeviceSequences:
    """Every device's sequence numbers as they arrive (see the module docstring)."""

    def __init__(self, highs: Mapping[tuple[str, str], int] | None = None) -> None:
        self._devices = {key: _Device(high) for key, high in (highs or {}).items()}
        self._new: Counter[str] = Counter()
        self.untracked: Counter[str] = Counter()
        """Device names not watched, by table (past :data:`MAX_NEW_DEVICES`)."""

    def _device(self, table_id: str, device: str) -> _Device | None:
        found = self._devices.get((table_id, device))
        if found is None:
            if self._new[table_id] >= MAX_NEW_DEVICES:
                self.untracked[table_id] += 1
                return None
            self._new[table_id] += 1
            found = self._devices[table_id, device] = _Device()
        return found

    def seen(self, table_id: str, device: str, seq: int) -> None:
        """An event numbered ``seq`` arrived from a device."""
        watched = self._device(table_id, device)
        if watched is None:
            return
        if seq > watched.high:
            self._skip(watched, seq - 1)
            watched.high = seq
        elif watched.missing:
            watched.missing = _without(watched.missing, seq)

    def heartbeat(self, table_id: str, device: str, last: int | None) -> list[Gap]:
        """A device's heartbeat, saying its last event was ``last``; the gaps now found lost."""
        watched = self._device(table_id, device)
        if watched is None:
            return []
        if last is not None and last > watched.high:
            self._skip(watched, last)
            watched.high = last
        lost = _common(watched.missing, watched.suspect)
        watched.missing = _less(watched.missing, lost)
        watched.suspect = list(watched.missing)
        lost = sorted([*watched.dropped, *lost])
        watched.dropped = []
        return [Gap(table_id, device, first, end) for first, end in lost]

    @staticmethod
    def _skip(watched: _Device, up_to: int) -> None:
        """The numbers after the highest seen, up to ``up_to``, did not arrive (yet)."""
        if up_to > watched.high:
            watched.missing.append((watched.high + 1, up_to))
        while len(watched.missing) > MAX_RANGES:
            # A device leaving this many holes is broken or hostile: its oldest holes are
            # declared at the next heartbeat rather than kept without bound.
            oldest = watched.missing.pop(0)
            watched.dropped.append(oldest)
            watched.suspect = _less(watched.suspect, [oldest])

    def missing(self, table_id: str, device: str) -> list[Range]:
        """The numbers of a device not seen yet (for tests and the display)."""
        watched = self._devices.get((table_id, device))
        return list(watched.missing) if watched is not None else []
