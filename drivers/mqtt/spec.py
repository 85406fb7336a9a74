"""The MQTT driver's spec: ``[broker]`` becomes the table-events source and the meters sink.

Both connections use one ``[broker]`` section (docs/mqtt.md); tables whose ``transport`` is
``mqtt`` are the ones the source accepts. aiomqtt is imported only when a broker is configured.
The driver's metric families (``jackpotd_mqtt_*``, ``jackpotd_agent_*``, the link's
``jackpotd_site_*`` and ``jackpotd_wide_area_*``) are its own (:mod:`drivers.mqtt.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from controller.plugins import DriverContext, DriverParts, DriverSpec, LinkView
from drivers.mqtt.metrics import (
    AgentFamilies,
    BrokerLinkFamilies,
    SiteTrafficFamilies,
    UplinkFamilies,
)
from drivers.mqtt.refusals import REFUSALS
from drivers.mqtt.settings import BrokerSettings, check_broker

if TYPE_CHECKING:
    from collections.abc import Callable

    from prometheus_client.registry import Collector

    from controller.ports import SiteChainView

BROKER_LINK: Final = "broker link"
"""What the display's sources panel calls a broker connection."""


def build(settings: BrokerSettings, context: DriverContext) -> DriverParts:
    """The source (table events in) and the sink (meters, hits, commands out)."""
    from drivers.mqtt.sink import MqttSink  # noqa: PLC0415 - aiomqtt only with a broker
    from drivers.mqtt.source import MqttSource  # noqa: PLC0415

    source = MqttSource(
        settings, known_tables=[table.table_id for table in context.tables], sites=context.sites
    )
    source.agents.epoch = context.epoch
    if source.sites is not None:
        source.sites.epoch = context.epoch
    sink = MqttSink(settings, context.outbox)
    collectors: list[Collector] = [BrokerLinkFamilies([source, sink]), AgentFamilies(source)]
    if source.sites is not None:
        collectors.append(SiteTrafficFamilies(source.sites))
    return DriverParts(
        sources=[source],
        sinks=[sink],
        links=[
            LinkView(source, BROKER_LINK, role="table events in", feeds_meters=True),
            LinkView(sink, BROKER_LINK, role="meters and hits out"),
        ],
        health=[source],
        collectors=collectors,
    )


def uplink(settings: BrokerSettings, central_site: str, view: SiteChainView) -> DriverParts:
    """A property's link to central's brokers, under central's topics (docs/wide-area.md)."""
    from drivers.mqtt.site_uplink import SiteUplink  # noqa: PLC0415 - aiomqtt only if linked

    link = SiteUplink(msgspec.structs.replace(settings, site=central_site), view)
    return DriverParts(sources=[link], collectors=[UplinkFamilies(link, view.sent_high)])


async def published_head(settings: BrokerSettings, controller_id: str) -> bytes | None:
    """The controller's last signed head the broker retains (:mod:`drivers.mqtt.published_head`)."""
    from drivers.mqtt.published_head import published_head as read  # noqa: PLC0415

    return await read(settings, controller_id)


async def central_mark(
    settings: BrokerSettings,
    central_site: str,
    site: str,
    hello: bytes,
    accept: Callable[[bytes], bool],
) -> bytes | None:
    """Central's answer to a hello: its mark of this property (:mod:`drivers.mqtt.central_mark`)."""
    from drivers.mqtt.central_mark import central_mark as ask  # noqa: PLC0415

    return await ask(settings, central_site, site, hello, accept)


def describe(broker: BrokerSettings) -> str:
    """Where the broker is, how the controller logs in."""
    tls = "TLS" if broker.tls is not None else "no TLS"
    user = f"user {broker.username}" if broker.username else "anonymous"
    if broker.out_username is not None:
        user = f"users {broker.username} (in) and {broker.out_username} (out)"
    where = ", ".join(f"{host}:{port}" for host, port in broker.addresses())
    return f"{where}, {tls}, {user}, client id {broker.client_id}"


SPEC = DriverSpec(
    refusals=REFUSALS,
    name="mqtt",
    section="broker",
    settings=BrokerSettings,
    build=build,
    uplink=uplink,
    published_head=published_head,
    central_mark=central_mark,
    check=check_broker,
    transport="mqtt",
    describe=describe,
)
