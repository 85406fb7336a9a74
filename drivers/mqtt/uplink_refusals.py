"""What a property's uplink refuses from central, counted by reason and logged rate-limited.

docs/wide-area.md, "A replayed acknowledgement". Anyone who can publish on the property's
ack and award topics can make refusals happen as fast as the broker carries them (a captured
acknowledgement published in a loop), so each is counted (``jackpotd_wide_area_refused``,
by reason) but logged at most once per reason and ``LOG_INTERVAL_S``, the next line saying
how many were not: the log grows by a few lines a minute whatever the flood.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from controller.widearea.freshness import FRESHNESS_REFUSALS
from controller.widearea.property_link import (
    AHEAD_OF_CHAIN,
    HEAD_DIFFERS,
    MALFORMED,
    OTHER_SITE,
    STALE_EPOCH,
)

if TYPE_CHECKING:
    import logging

NOT_CENTRAL: Final = "not-central"
UNDECODABLE: Final = "undecodable"
AWARD_UNBOUND: Final = "award-unbound"
"""An award heard before central acknowledged this connection, or from a central holding
another history: left; central sends it again with its next acknowledgement."""
REFUSALS: Final = (
    NOT_CENTRAL, UNDECODABLE, OTHER_SITE, MALFORMED, AHEAD_OF_CHAIN, STALE_EPOCH, HEAD_DIFFERS,
    *FRESHNESS_REFUSALS, AWARD_UNBOUND,
)  # fmt: skip
"""Why central's acknowledgements and awards are not acted on (``jackpotd_wide_area_refused``)."""
LOG_INTERVAL_S: Final = 10.0
"""One line per refusal reason this often; the rest counted in the next one."""


class RefusalLog:
    """The uplink's refusals: ``counts`` by reason (its metrics), and their log lines."""

    def __init__(self, name: str, logger: logging.Logger) -> None:
        self.name = name
        self.logger = logger
        self.counts: dict[str, int] = {}
        self._logged: dict[str, tuple[float, int]] = {}
        """Per reason, when it was last logged and how many since were not."""

    def refuse(self, reason: str, detail: str) -> None:
        """Count it; log it unless one of its reason was logged within the interval."""
        self.counts[reason] = self.counts.get(reason, 0) + 1
        now = time.monotonic()
        logged_at, unlogged = self._logged.get(reason, (float("-inf"), 0))
        if now - logged_at < LOG_INTERVAL_S:
            self._logged[reason] = (logged_at, unlogged + 1)
            return
        more = f" (and {unlogged} more like it, not logged one by one)" if unlogged else ""
        self.logger.warning("%s: refused from central (%s): %s%s", self.name, reason, detail, more)
        self._logged[reason] = (now, 0)
