"""The display's meter signatures: awaited off the event loop, one request per meter.

Each meter the page shows carries the controller's signature (controller/web/snapshot.py
``signed_meter``). With ``[controller] signer_socket`` the key is in the signer process, and a
signer that is stopped, swapped out or on a hung disk answers late or never: a signature asked
for on the event loop's thread would hold up every handler, ``/healthz`` and the table links'
intake with it, for the signer's whole timeout (docs/security.md, "The signer stalled"). So the
display awaits the signature (``sign_async``, controller/runtime/remote_signer.py), bounded by
the signer's own timeout, and only the stream or the state answer waiting for it waits.

Every open stream is sent the same meter updates: the signature of a meter's bytes is asked for
once, shared by the streams that wait for it, and kept for the next few meters. A meter whose
signature cannot be had in time is not sent (a stream goes on with the next update; the state
answer leaves it unsigned, and the page keeps what it showed, saying how old it is): a meter
without its signature is what the page drops as a forgery.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from controller.errors import RefusedError, UnavailableError
from controller.meter_signature import Signer as KeySigner

if TYPE_CHECKING:
    from controller.security.signer import Signer

KEPT: Final = 64
"""Signatures kept by their bytes (a few per pool: the streams are at most a few updates apart)."""
SAY_EVERY_S: Final = 60.0
"""At most one log line per this many seconds about meters sent without their signature."""
log = logging.getLogger(__name__)


class MeterSignatures:
    """The signatures of the meters the display sends, awaited and shared (see above)."""

    def __init__(self, key: Signer) -> None:
        self._signer = KeySigner.of(key)
        self._kept: OrderedDict[bytes, asyncio.Future[str]] = OrderedDict()
        self.missed = 0
        """Meters not sent (or sent unsigned) because the signer did not sign them in time."""
        self._said_at: float | None = None

    async def signature(self, data: bytes) -> str | None:
        """The signature of ``data`` (a meter's signed bytes), or None if the signer gave none."""
        future = self._kept.get(data)
        if future is None:
            future = asyncio.ensure_future(self._sign(data))
            future.add_done_callback(_retrieved)
            self._kept[data] = future
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        try:
            # Shielded: a stream that ends while it waits does not cancel the others' request.
            return await asyncio.shield(future)
        except (UnavailableError, RefusedError, OSError, ValueError) as error:
            if self._kept.get(data) is future:
                del self._kept[data]  # asked again for the next stream or answer
            self._missed(error)
            return None

    async def _sign(self, data: bytes) -> str:
        signer = self._signer
        if signer.sign_async is None:
            return signer.sign(data)  # a key in the process: tens of microseconds
        return await signer.sign_async(data)

    def _missed(self, error: Exception) -> None:
        self.missed += 1
        now = time.monotonic()
        if self._said_at is not None and now - self._said_at < SAY_EVERY_S:
            return
        self._said_at = now
        log.error(
            "display: a meter not signed, not shown on the page: %s (%d so far)", error, self.missed
        )


def _retrieved(future: asyncio.Future[str]) -> None:
    """Take a failed request's error, so that none is reported as never retrieved."""
    with contextlib.suppress(asyncio.CancelledError):
        future.exception()
