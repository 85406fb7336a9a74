"""How many connections the web port may hold, sized below the process's open-file limit.

Every connection to the display's port is a file descriptor, and so are the journal's files,
the broker connections, the serial lines and the signs. A flood of connections that took the
last descriptor would stop the journal and the broker as surely as a pulled cable (`/healthz`
dead, table events unjournaled). So at start the service reads its soft ``RLIMIT_NOFILE`` and
holds the web port to ``[web] max_connections`` or the limit less :data:`FD_HEADROOM`,
whichever is lower (docs/operations.md, "The web port"); it refuses to start if that leaves no
place beyond ``[web] max_streams`` for ``/healthz`` and ``/metrics``.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from controller.config.web_section import tls_context
from controller.errors import ConfigurationError

if TYPE_CHECKING:
    import ssl

    from controller.config.schema import WebSettings

ACCEPT_BACKLOG: Final = 128
"""The kernel's queue of connections not yet accepted: they hold no descriptor of ours."""
FD_HEADROOM: Final = 256
"""Descriptors kept from web clients: 32 for connections the port has closed and the loop has
not released yet (controller/web/gate.py, ``CLOSING_ROOM``), and the rest for the journal (its
files, its reader, a PostgreSQL pool), the broker connections, serial lines, signs, the log,
the listening sockets, the event loop's own and ``/metrics`` reading ``/proc``."""
log = logging.getLogger(__name__)


class FileLimitError(ConfigurationError, RuntimeError):
    """The open-file limit leaves the web port no place beyond its streams."""


@dataclass(frozen=True, slots=True)
class WebLimits:
    """Where the web port listens and what bounds each of its connections."""

    host: str
    port: int
    max_connections: int
    """The cap in force: ``[web] max_connections``, or less under a low open-file limit."""
    header_timeout_s: float
    idle_timeout_s: float
    send_timeout_s: float
    tls: ssl.SSLContext | None = None
    """The port's TLS (``[web] tls_cert`` and ``tls_key``): HTTPS only; None: plain HTTP."""

    @classmethod
    def of(cls, web: WebSettings, file_limit: int | None = None) -> WebLimits:
        """The limits of ``[web]`` under ``file_limit`` (the process's soft limit if None)."""
        if file_limit is None:
            soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
            file_limit = None if soft == resource.RLIM_INFINITY else soft
        cap = web.max_connections
        if file_limit is not None and file_limit - FD_HEADROOM < cap:
            cap = file_limit - FD_HEADROOM
            if cap <= web.max_streams:
                raise FileLimitError(
                    f"the open-file limit (RLIMIT_NOFILE {file_limit}) leaves {max(cap, 0)} "
                    f"descriptors for web connections after {FD_HEADROOM} kept for the journal, "
                    f"brokers and lines: not more than [web] max_streams ({web.max_streams}); "
                    "raise LimitNOFILE or lower max_streams"
                )
            log.info(
                "web: at most %d connections: the open-file limit %d less %d kept for the "
                "journal, brokers and lines ([web] max_connections is %d)",
                cap, file_limit, FD_HEADROOM, web.max_connections,
            )  # fmt: skip
        return cls(
            web.host,
            web.port,
            cap,
            web.header_timeout_s,
            web.idle_timeout_s,
            web.send_timeout_s,
            tls_context(web.tls_cert, web.tls_key) if web.tls_cert else None,
        )
