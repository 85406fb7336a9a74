"""Wide-area links as metrics: central's linked properties, and a property's link to central.

docs/wide-area.md ("Operations"), docs/metrics.md. Part of the families
:mod:`controller.runtime.metrics` builds at each scrape:

* at **central**, per linked property (label ``property``: Prometheus gives every series of a
  target a ``site`` label of its own, the controller's): what its ledger applied and
  reconciled of the property's chain and whether the link is halted, read from the journal's
  state; and, from the MQTT source answering the properties
  (:class:`controller.plugins.SiteLinkStats`), what it dropped before the sequencer, the
  acknowledgements it published and when it last heard each property;
* at a **property**: whether its wide-area wagers are open, as journaled (what the ledger
  enforces); and, from its uplink (:class:`controller.plugins.UplinkStats`), whether it is
  connected to central's brokers, what central has acknowledged, the backlog behind it, what
  was published and refused, and when central was last heard.

Only a property central links names a series: a client cannot add series by inventing names.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from controller.runtime.metric_labels import counter_family

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from prometheus_client.metrics_core import Metric

    from controller.ledger.state import LedgerState
    from controller.plugins import SiteLinkStats, UplinkStats

LABEL = "property"
"""A linked property's label at central (``site`` is the scrape target's)."""


@dataclass(slots=True)
class WideAreaLinks:
    """What the service registers for these metrics (controller/service/drivers.py)."""

    sites: list[SiteLinkStats] = field(default_factory=list)
    """At central: what answers its linked properties (the MQTT source's answers)."""
    uplink: UplinkStats | None = None
    """At a property: its link to central."""

    def families(self, state: LedgerState) -> Iterator[Metric]:
        """Every wide-area family this controller has: central's, a property's, or none."""
        yield from central(state, self.sites)
        yield from property_link(state, self.uplink)


def central(state: LedgerState, links: Sequence[SiteLinkStats]) -> Iterator[Metric]:
    """Per linked property: its chain as applied, and its traffic at the source."""
    if not state.sites:
        return
    sites = sorted(state.sites)
    gauges = {
        "applied": GaugeMetricFamily(
            "jackpotd_site_applied_seq",
            "The last site_seq of the property's chain central applied.",
            labels=[LABEL],
        ),
        "reconciled": GaugeMetricFamily(
            "jackpotd_site_reconciled_seq",
            "The site_seq the property's last matched reconciliation covered.",
            labels=[LABEL],
        ),
        "halted": GaugeMetricFamily(
            "jackpotd_site_halted",
            "1 while the property's link is halted until a manager acts.",
            labels=[LABEL],
        ),
    }
    for site in sites:
        link = state.sites[site].link
        gauges["applied"].add_metric([site], link.through)
        gauges["reconciled"].add_metric([site], link.reconciled_through)
        gauges["halted"].add_metric([site], 1.0 if link.halted else 0.0)
    yield from gauges.values()
    if links:  # what a source counts: none without a broker to hear the properties on
        yield from _traffic(sites, links)


def _traffic(sites: list[str], links: Sequence[SiteLinkStats]) -> Iterator[Metric]:
    drops: Counter[tuple[str, str]] = Counter()
    acks: Counter[str] = Counter()
    for each in links:
        drops.update(each.site_drops)
        acks.update(each.site_acks)
    reasons = sorted({reason for each in links for reason in each.drop_reasons})
    linked = set(sites)
    yield counter_family(
        "jackpotd_site_dropped",
        "A linked property's messages and totals dropped before the sequencer, by why.",
        [LABEL, "reason"],
        known=[(site, reason) for site in sites for reason in reasons],
        counts={key: count for key, count in drops.items() if key[0] in linked},
    )
    yield counter_family(
        "jackpotd_site_acks",
        "Signed acknowledgements published to the property (heartbeats included).",
        [LABEL],
        known=[(site,) for site in sites],
        counts={(site,): count for site, count in acks.items() if site in linked},
    )
    heard = GaugeMetricFamily(
        "jackpotd_site_last_heard_timestamp_seconds",
        "When the property was last heard (Unix time; the source's start if never).",
        labels=[LABEL],
    )
    for site in sites:
        heard.add_metric([site], max(each.heard_at(site) for each in links))
    yield heard


def property_link(state: LedgerState, uplink: UplinkStats | None) -> Iterator[Metric]:
    """A property's wide-area wagers as journaled, and its uplink to central."""
    chain = state.chain
    if chain is not None:
        is_open = GaugeMetricFamily(
            "jackpotd_wide_area_open",
            "1 while the property's wide-area progressive wagers are open (as journaled).",
        )
        is_open.add_metric([], 1.0 if chain.open else 0.0)
        yield is_open
    if uplink is None:
        return
    connected = GaugeMetricFamily(
        "jackpotd_wide_area_connected", "1 while connected to one of central's brokers."
    )
    connected.add_metric([], 1.0 if uplink.connected else 0.0)
    acked = uplink.position.acked
    sent = GaugeMetricFamily(
        "jackpotd_wide_area_acked_seq",
        "The last site_seq central acknowledged (0 after a start until its first).",
    )
    sent.add_metric([], acked)
    backlog = GaugeMetricFamily(
        "jackpotd_wide_area_backlog",
        "Messages journaled for central and not acknowledged yet.",
    )
    backlog.add_metric([], max(0, (chain.seq if chain is not None else 0) - acked))
    published = CounterMetricFamily(
        "jackpotd_wide_area_published", "Messages published to central (resends included)."
    )
    published.add_metric([], uplink.published)
    refused = counter_family(
        "jackpotd_wide_area_refused",
        "Central's acknowledgements and awards not acted on, by why.",
        ["reason"],
        known=[(reason,) for reason in uplink.refusals],
        counts={(reason,): count for reason, count in uplink.refused.items()},
    )
    heard = GaugeMetricFamily(
        "jackpotd_wide_area_central_last_heard_timestamp_seconds",
        "When central was last heard: an acknowledgement accepted (Unix time; the start if never).",
    )
    heard.add_metric([], uplink.heard_at)
    yield from (connected, sent, backlog, published, refused, heard)
