"""The small services beside the controller: how they log and end.

``jackpotd agent`` and ``jackpotd sign`` run one driver's work until they are stopped, on
SIGTERM or SIGINT; both are ``Type=notify`` services with a watchdog (systemd/). Their driver
is found in the registry (:func:`controller.plugins.program`; the core imports no driver). The
controller itself has its own start-up and drain (controller/service).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from typing import TYPE_CHECKING, Final

from controller.runtime.logsafe import log_handler
from controller.runtime.systemd import Notifier

if TYPE_CHECKING:
    from collections.abc import Awaitable

LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")


def start_logging(level: str) -> None:
    """Log at ``level`` to standard error, one line per record (the journal of systemd)."""
    logging.basicConfig(level=level, handlers=[log_handler(sys.stderr)], force=True)


async def until_stopped(work: Awaitable[None], status: str) -> None:
    """Run ``work``, tell systemd (ready, its watchdog), and stop it on SIGTERM or SIGINT."""
    notifier = Notifier.from_environment()
    task = asyncio.ensure_future(work)
    keepalive = asyncio.ensure_future(notifier.watchdog())

    def stop() -> None:
        notifier.stopping()
        task.cancel()

    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(number, stop)
    notifier.ready(status)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        keepalive.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keepalive
