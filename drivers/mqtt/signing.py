"""The sink's signatures: what it publishes signed is signed off its intake, in order, retried.

A meter, a pool status and a hit leave the box signed (controller/meter_signature.py). With
the key held by the signer process each signature is a request to it; a signer that is slow
or stopped must not hold up the event loop, nor the sink's intake of the controller's updates,
nor lose a hit. So the sink hands each of them to :class:`Signing`, and one task of its own
awaits their signatures, oldest first, and gives each signed payload back to the sink to
publish (:meth:`drivers.mqtt.sink.MqttSink.signed`):

* a meter or pool status not yet signed is replaced by a newer one of its pool (the newer
  goes last, so that a hit before it still comes first: the hit before the meter reset);
* a hit is never dropped: a signer that cannot be reached is asked again after a capped
  backoff, the hit and everything after it waiting, each wait bounded; the sink's outbox
  takes it once signed (until then a crash loses nothing either: the hit is journaled, and
  the outbox's catch-up announces it at the next start, drivers/mqtt/outbox.py);
* a refusal (a statement the signer will not sign: a key or controller it does not know) is
  not asked again: the update is dropped, counted and logged, and the next one goes on.

Failures are logged at the first and then at most once a minute with the count, so that a
signer away for an hour does not flood the log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Final

from controller.backoff import Backoff
from controller.errors import RefusedError, UnavailableError
from controller.outputs import MeterUpdate, PoolUpdate
from drivers.mqtt.outgoing import signed_payload

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.meter_signature import Signer
    from drivers.mqtt.outgoing import SignedUpdate

log = logging.getLogger(__name__)

SAY_EVERY_S: Final = 60.0
"""At most one log line per this many seconds about signatures that failed."""


def _replaces(update: SignedUpdate, queued: SignedUpdate) -> bool:
    """Whether ``update`` makes ``queued`` pointless to sign: the same pool's newer state."""
    if isinstance(update, MeterUpdate) and isinstance(queued, MeterUpdate):
        return update.pool_id == queued.pool_id
    if isinstance(update, PoolUpdate) and isinstance(queued, PoolUpdate):
        return update.pool_id == queued.pool_id
    return False


class Signing:
    """The updates waiting for their signature, and the task that gets them (see above)."""

    def __init__(
        self,
        name: str,
        controller: str,
        signed: Callable[[SignedUpdate, bytes], None],
        backoff: Backoff | None = None,
    ) -> None:
        self.name = name
        self.controller = controller
        self._signed = signed
        self._backoff = backoff or Backoff(0.1, 5.0)
        self._waiting: deque[SignedUpdate] = deque()
        self._wake = asyncio.Event()
        self.replaced = 0
        """Meters and pool statuses replaced by a newer one before they were signed."""
        self.unavailable = 0
        """Signatures the signer did not give in time (asked again)."""
        self.refused = 0
        """Updates the signer refused to sign (dropped)."""
        self._said_at: float | None = None
        self._since = 0

    @property
    def pending(self) -> int:
        """Updates waiting for their signature."""
        return len(self._waiting)

    def put(self, update: SignedUpdate) -> None:
        """Sign ``update`` after those before it (a state replacing its pool's older one)."""
        for index, queued in enumerate(self._waiting):
            if index > 0 and _replaces(update, queued):  # the first may be being signed
                del self._waiting[index]
                self.replaced += 1
                break
        self._waiting.append(update)
        self._wake.set()

    async def run(self, signer: Signer) -> None:
        """Sign what comes, oldest first, until cancelled."""
        while True:
            while not self._waiting:
                self._wake.clear()
                await self._wake.wait()
            update = self._waiting[0]
            try:
                payload = await signed_payload(update, signer, self.controller)
            except (UnavailableError, OSError) as error:
                self.unavailable += 1
                self._say(f"not signed, asked again: {error}")
                await asyncio.sleep(self._backoff.next_delay())
                continue
            except (RefusedError, ValueError) as error:
                self.refused += 1
                self._say(f"refused by the signer, not published: {error}")
                self._waiting.popleft()
                continue
            self._waiting.popleft()
            if self._since or self._said_at is not None:
                log.warning("%s: signing again (%d failures before)", self.name, self._since)
                self._said_at, self._since = None, 0
            self._backoff.reset()
            self._signed(update, payload)

    def _say(self, what: str) -> None:
        self._since += 1
        now = time.monotonic()
        if self._said_at is not None and now - self._said_at < SAY_EVERY_S:
            return
        self._said_at = now
        log.error(
            "%s: %s (%d waiting for a signature; %d failed since the last line)",
            self.name, what, len(self._waiting), self._since,
        )  # fmt: skip
