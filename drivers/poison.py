"""Poison messages: input that keeps failing is parked, and a source that keeps failing says so.

Bad input is a rejection: journaled, acknowledged, never retried (docs/faults.md). What is left
is input that makes the *controller* fail (a fault of its own, :class:`EventNotRecordedError`)
or a source that cannot do its work at all (a broker it cannot reach, a port it cannot open).
Left alone, the first is delivered again and again (the device or the broker resends what was
not acknowledged), and it stops everything behind it on the same connection; the second is a
floor that stopped playing while ``/healthz`` says ok.

* :class:`PoisonCount` counts the failures of each message by its content. After
  :data:`DEAD_LETTER_AFTER` failures the source *parks* it: the message (its digest and the
  start of its content) is journaled as a ``dead-letter`` fault, with an alert, and then
  acknowledged, so that what comes after it flows again.
* :data:`FAILING_AFTER` failures in a row make a source report its trouble, which ``/healthz``
  shows (:class:`SourceHealth`).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

DEAD_LETTER: Final = "dead-letter"
"""The reason of the fault a parked message is journaled as."""
DEAD_LETTER_AFTER: Final = 3
"""Failures of the same message before it is parked."""
FAILING_AFTER: Final = 3
"""Failures in a row before a source reports that it keeps failing."""
_REMEMBERED: Final = 1024


def digest(*parts: bytes) -> str:
    """What identifies a message's content (its topic or device, and its bytes)."""
    hashed = hashlib.sha256()
    for part in parts:
        hashed.update(len(part).to_bytes(8, "big"))
        hashed.update(part)
    return hashed.hexdigest()


class PoisonCount:
    """Failures per message content; the oldest are forgotten past a bound."""

    def __init__(self) -> None:
        self._failures: OrderedDict[str, int] = OrderedDict()

    def failed(self, key: str) -> int:
        """One more failure of the message ``key``; how many it has had."""
        count = self._failures.pop(key, 0) + 1
        self._failures[key] = count
        while len(self._failures) > _REMEMBERED:
            self._failures.popitem(last=False)
        return count

    def forget(self, key: str) -> None:
        """The message was handled (or parked)."""
        self._failures.pop(key, None)


@dataclass(slots=True)
class SourceHealth:
    """Whether a source keeps failing, for ``/healthz`` and the metrics."""

    failures_in_row: int = 0
    last_failure: str = ""
    dead_letters: int = 0
    """Messages parked since start."""

    def failed(self, why: str) -> None:
        """One more failure (a connection, or a message that could not be recorded)."""
        self.failures_in_row += 1
        self.last_failure = why

    def worked(self) -> None:
        """The source did its work (connected, or handled a message)."""
        self.failures_in_row = 0

    @property
    def trouble(self) -> str | None:
        """Why the source keeps failing; None while it works."""
        if self.failures_in_row < FAILING_AFTER:
            return None
        return f"failed {self.failures_in_row} times in a row: {self.last_failure}"
