"""Log lines about web clients, at most one per kind and interval, with a count.

Whatever a client can make happen again and again (a connection refused at the cap, one closed
for sending no request, an accept that fails) must not write a line each time: a flood would
grow the log without bound and bury what matters. The first of a kind is logged at once; the
rest of its interval are counted and said in one line when the interval is over (the web
port's sweep calls :meth:`LogThrottle.flush`), so the log grows by a few lines a minute
whatever the flood (docs/operations.md, "The web port").
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Final

from controller.runtime.rejection_limit import RejectionLimit

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Collection

INTERVAL_S: Final = 10.0


class LogThrottle:
    """One warning per kind and interval; the others counted and said once it is over.

    The counting is the journal's own flood limit (controller/runtime/rejection_limit.py)
    with an allowance of one: what it would leave out of the journal is left out of the log.
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self._limit = RejectionLimit(threshold=1, interval_s=interval_s, monotonic=clock)
        self._text: dict[str, str] = {}
        """Each kind's latest text (the kinds are the web port's few, named in its code)."""

    def warn(self, kind: str, text: str) -> None:
        """Log ``text`` unless a ``kind`` was logged within the interval; count it then."""
        self._text[kind] = text
        self.flush()
        if self._limit.admit(kind, kind):
            self.logger.warning("%s", text)

    def flush(self, *, everything: bool = False) -> None:
        """Say the count of each kind whose interval is over (every count, when stopping)."""
        for left in self._limit.due(everything=everything):
            self.logger.warning(
                "%s (and %d more like it in %g s, not logged one by one)",
                self._text.get(left.source, left.source), left.count, left.interval_s,
            )  # fmt: skip


class QuietLoopErrors:
    """The event loop's error reports about the web port's sockets, through a throttle.

    asyncio reports an accept that fails (``EMFILE``: out of descriptors) and a transport that
    fails to the loop's exception handler, which logs each with a traceback. Those concerning
    the port's listening sockets or its connections' protocols go through the throttle as one
    line; every other report goes where it went before.
    """

    def __init__(
        self,
        throttle: LogThrottle,
        sockets: Collection[socket.socket],
        ours: Callable[[object], bool],
    ) -> None:
        self.throttle = throttle
        self.listening = {sock.fileno() for sock in sockets}
        self.ours = ours
        self._loop: asyncio.AbstractEventLoop | None = None
        self._before: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None = None

    def install(self) -> None:
        """Take the loop's reports (until :meth:`remove`)."""
        loop = asyncio.get_running_loop()
        self._loop, self._before = loop, loop.get_exception_handler()
        loop.set_exception_handler(self.handle)

    def remove(self) -> None:
        """Give the reports back to the handler there was."""
        if self._loop is not None:
            self._loop.set_exception_handler(self._before)
            self._loop = None

    def handle(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """One report: the web port's through the throttle, any other as before."""
        sock = context.get("socket")
        listening = sock is not None and getattr(sock, "fileno", lambda: -1)() in self.listening
        if listening or self.ours(context.get("protocol")):
            error = context.get("exception")
            reason = f": {type(error).__name__}: {error}" if error is not None else ""
            self.throttle.warn("loop", f"web: {context.get('message', 'error')}{reason}")
            return
        if self._before is not None:
            self._before(loop, context)
        else:
            loop.default_exception_handler(context)


class QuietRecords(logging.Filter):
    """aiohttp's own lines about requests it failed to read, through a throttle.

    aiohttp logs a malformed request with a traceback (``Error handling request from ...``):
    a client sending junk on connection after connection would write one each. Installed on
    the ``aiohttp.server`` logger while the port is served, it turns each into a throttled
    line naming the error.
    """

    def __init__(self, throttle: LogThrottle) -> None:
        super().__init__()
        self.throttle = throttle

    def filter(self, record: logging.LogRecord) -> bool:
        """Passes a warning or worse on only through the throttle (debug lines as they are)."""
        if record.levelno < logging.WARNING:
            return True
        error = record.exc_info[1] if record.exc_info else None
        reason = f": {type(error).__name__}: {error}" if error is not None else ""
        # One line: the error quotes what the client sent, newlines and all.
        text = " ".join(f"web: {record.getMessage()}{reason}".split())
        self.throttle.warn("request-error", text)
        return False
