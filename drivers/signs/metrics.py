"""The sign driver's own metric family (docs/metrics.md), handed to the core in its parts.

``jackpotd_follower_stale_updates_dropped``: per sign (label ``follower``), the updates it
dropped as older, by ``(epoch, seq)``, than one it showed (controller/outputs.py
``FollowerOrder``). A controller without signs has no such family: a counter shows its series
from 0 once a sign is configured. The core merges every sign's family into one by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

    from controller.outputs import FollowerOrder


@dataclass(frozen=True, slots=True)
class FollowerFamilies:
    """One sign's (or follower's) stale updates dropped."""

    order: FollowerOrder

    def collect(self) -> Iterator[Metric]:
        """The family, with the sign's series."""
        dropped = CounterMetricFamily(
            "jackpotd_follower_stale_updates_dropped",
            "Updates a sign or display dropped as older, by (epoch, seq), than one it showed.",
            labels=["follower"],
        )
        dropped.add_metric([self.order.name], self.order.stale)
        yield dropped
