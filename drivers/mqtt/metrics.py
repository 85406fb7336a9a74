"""The MQTT driver's own metric families (docs/metrics.md), handed to the core in its parts.

The core names none of these (``controller.plugins.DriverParts.collectors``); it merges the
families of every entry by name at each scrape. Each collector reads one part's live counts:

* :class:`BrokerLinkFamilies`: ``jackpotd_mqtt_connected`` and ``jackpotd_mqtt_reconnects``,
  per broker connection (label ``client``: the source's ``mqtt``, the sink's ``mqtt-out``...);
* :class:`AgentFamilies`: ``jackpotd_agent_*``, what the source did with table agents'
  events (docs/ha.md, "Table agents");
* :class:`SiteTrafficFamilies`: at central, ``jackpotd_site_dropped``, ``_acks`` and
  ``_last_heard_timestamp_seconds`` per linked property (label ``property``), read from the
  source's answers; only a property the journal links names a series;
* :class:`UplinkFamilies`: at a property, ``jackpotd_wide_area_connected``, ``_acked_seq``,
  ``_backlog``, ``_published``, ``_refused`` and ``_central_last_heard_timestamp_seconds``
  (docs/wide-area.md, "Operations").

The ``jackpotd_site_*`` and ``jackpotd_wide_area_*`` families the journal holds (applied,
reconciled, halted, open) are the core's (controller/runtime/site_metrics.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from controller.metric_families import counter_family

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from prometheus_client.metrics_core import Metric

    from controller.plugins import Connection
    from controller.widearea.property_link import SitePosition

LABEL = "property"
"""A linked property's label at central (``site`` is the scrape target's)."""


class AgentCounts(Protocol):
    """What a source that table agents send through counts (drivers.mqtt.source.MqttSource)."""

    name: str

    @property
    def agent_gaps(self) -> int:
        """Agent events left for the resend because an earlier one had not arrived."""
        ...

    @property
    def agent_acks(self) -> int:
        """Cumulative acknowledgements published to agents."""
        ...

    @property
    def agent_refused(self) -> int:
        """Agent events refused for their table agent's signature (docs/ha.md)."""
        ...


class SiteCounts(Protocol):
    """What central's answers count per linked property (drivers.mqtt.site_answers)."""

    drop_reasons: tuple[str, ...]
    """Every reason ``site_drops`` could have, each shown at 0 until counted."""

    @property
    def site_drops(self) -> Mapping[tuple[str, str], int]:
        """Messages and totals dropped before the sequencer, by (site, reason)."""
        ...

    @property
    def site_acks(self) -> Mapping[str, int]:
        """Acknowledgements published, by site."""
        ...

    def linked(self) -> list[str]:
        """The properties the journal links, sorted."""
        ...

    def heard_at(self, site: str) -> float:
        """When the property was last heard (Unix time); the source's start if never."""
        ...


class UplinkCounts(Protocol):
    """What a property's link to central counts (drivers.mqtt.site_uplink.SiteUplink)."""

    connected: bool
    published: int
    refusals: tuple[str, ...]
    """Every reason ``refused`` could have, each shown at 0 until counted."""

    @property
    def refused(self) -> Mapping[str, int]:
        """Central's acknowledgements and awards not acted on, by why."""
        ...

    @property
    def position(self) -> SitePosition:
        """Where the chain stands with central: ``acked``, the last ``site_seq`` it covered."""
        ...

    @property
    def heard_at(self) -> float:
        """When central was last heard (Unix time); the link's start if never."""
        ...


@dataclass(frozen=True, slots=True)
class BrokerLinkFamilies:
    """``jackpotd_mqtt_*``: whether each broker connection is up, and its reconnections."""

    links: Sequence[Connection]

    def collect(self) -> Iterator[Metric]:
        """The two families, a series per connection."""
        connected = GaugeMetricFamily(
            "jackpotd_mqtt_connected", "1 when connected.", labels=["client"]
        )
        reconnects = CounterMetricFamily(
            "jackpotd_mqtt_reconnects", "Reconnections.", labels=["client"]
        )
        for client in self.links:
            connected.add_metric([client.name], 1.0 if client.connected else 0.0)
            reconnects.add_metric([client.name], client.reconnects)
        yield from (connected, reconnects)


@dataclass(frozen=True, slots=True)
class AgentFamilies:
    """``jackpotd_agent_*``: table agents' events left for a resend, acknowledged, refused."""

    source: AgentCounts

    def collect(self) -> Iterator[Metric]:
        """The three counters, a series for the source."""
        gaps = CounterMetricFamily(
            "jackpotd_agent_gaps",
            "Table agents' events left for their resend: an earlier one had not arrived.",
            labels=["client"],
        )
        acks = CounterMetricFamily(
            "jackpotd_agent_acks", "Acknowledgements published to table agents.", labels=["client"]
        )
        refused = CounterMetricFamily(
            "jackpotd_agent_signatures_refused",
            "Table events refused for their table agent's signature (docs/ha.md).",
            labels=["client"],
        )
        link = self.source
        gaps.add_metric([link.name], link.agent_gaps)
        acks.add_metric([link.name], link.agent_acks)
        refused.add_metric([link.name], link.agent_refused)
        yield from (gaps, acks, refused)


@dataclass(frozen=True, slots=True)
class SiteTrafficFamilies:
    """At central: a linked property's traffic at the source (none while nothing is linked)."""

    answers: SiteCounts

    def collect(self) -> Iterator[Metric]:
        """Drops by why, acknowledgements, when each property was last heard."""
        answers = self.answers
        sites = answers.linked()
        if not sites:
            return
        linked = set(sites)
        drops: Counter[tuple[str, str]] = Counter(answers.site_drops)
        yield counter_family(
            "jackpotd_site_dropped",
            "A linked property's messages and totals dropped before the sequencer, by why.",
            [LABEL, "reason"],
            known=[(site, reason) for site in sites for reason in sorted(answers.drop_reasons)],
            counts={key: count for key, count in drops.items() if key[0] in linked},
        )
        yield counter_family(
            "jackpotd_site_acks",
            "Signed acknowledgements published to the property (heartbeats included).",
            [LABEL],
            known=[(site,) for site in sites],
            counts={(site,): count for site, count in answers.site_acks.items() if site in linked},
        )
        heard = GaugeMetricFamily(
            "jackpotd_site_last_heard_timestamp_seconds",
            "When the property was last heard (Unix time; the source's start if never).",
            labels=[LABEL],
        )
        for site in sites:
            heard.add_metric([site], answers.heard_at(site))
        yield heard


@dataclass(frozen=True, slots=True)
class UplinkFamilies:
    """At a property: its link to central (``sent_high``: the chain's last ``site_seq``)."""

    uplink: UplinkCounts
    sent_high: Callable[[], int]

    def collect(self) -> Iterator[Metric]:
        """Connected, acknowledged, the backlog, published, refused, central last heard."""
        uplink = self.uplink
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
        backlog.add_metric([], max(0, self.sent_high() - acked))
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
            "When central was last heard: an acknowledgement accepted (Unix time; the start if "
            "never).",
        )
        heard.add_metric([], uplink.heard_at)
        yield from (connected, sent, backlog, published, refused, heard)
