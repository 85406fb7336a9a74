"""The node's part in a cluster, as metrics: leader or standby, the epoch, the journal's head.

The same three families come from the leader's metrics (controller/runtime/metrics.py) and a
warm standby's page (controller/web/standby.py), so that one query sees every node: the
standbys, the leader's epoch, and how far behind the leader a standby has followed
(docs/ha.md, "A warm standby"). On a single SQLite journal the node is the leader at epoch 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric


def sequencer_role(*, standby: bool, epoch: int, head: int) -> Iterator[Metric]:
    """``jackpotd_standby``, ``jackpotd_sequencer_epoch`` and ``jackpotd_journal_head_seq``."""
    role = GaugeMetricFamily(
        "jackpotd_standby",
        "1 while this node stands by for the sequencer's lease; 0 while it sequences.",
    )
    role.add_metric([], 1.0 if standby else 0.0)
    fence = GaugeMetricFamily(
        "jackpotd_sequencer_epoch",
        "The epoch of the sequencer's fence: this node's while it leads, the holder's as a "
        "standby last read it (0 without a fence).",
    )
    fence.add_metric([], epoch)
    last = GaugeMetricFamily(
        "jackpotd_journal_head_seq",
        "The last journal row this node has committed or followed.",
    )
    last.add_metric([], head)
    yield from (role, fence, last)
