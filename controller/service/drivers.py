"""Every source and sink the configuration names, built through the drivers' specs.

The service never imports a driver: each configured entry (``[broker]``, ``serial[0]``) carries
its spec (:mod:`controller.plugins`), and the spec builds the entry's parts from its settings
and a :class:`~controller.plugins.DriverContext`: the tables whose transport names the entry,
the journal-side outbox, the metrics' latency observers. What the parts report (their
connections, their sources' health, their own metric families) is handed to the metrics here,
whatever the driver: the service names none. A sink that
publishes meters off the box (:class:`~controller.meter_signature.MeterSigning`) is handed the
controller key's signer here, never the key (docs/mqtt.md, "Signed meters").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.meter_signature import MeterSigning, Signer
from controller.plugins import DriverContext, DriverParts, TableOffer
from controller.service.wide_area import wide_area_parts

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.config.schema import Config, DriverEntry, TableConfig
    from controller.ports import SiteLinks
    from controller.runtime.view import Runtime


def offer_of(table: TableConfig) -> TableOffer:
    """What a source serving the table may know of it."""
    rules = table.rules
    progressive = rules.progressive.progressive if rules.progressive else None
    limits = rules.wager_limits
    return TableOffer(
        table.table_id,
        seats=rules.seats,
        spots=frozenset(rules.offered()),  # every registered spot it offers (rules/spots.py)
        heartbeat_timeout_s=table.heartbeat_timeout_s,
        progressive_wager_cents=progressive.wager_cents if progressive else None,
        odds_limits_cents=(
            (
                max(each.minimum_cents for each in limits.values()),
                min(each.maximum_cents for each in limits.values()),
            )
            if limits
            else None
        ),
    )


def build_drivers(config: Config, runtime: Runtime) -> DriverParts:
    """Build every configured entry; register what the parts report with the metrics.

    With ``[wide_area]`` the link's parts come too (controller/service/wide_area.py).
    """
    built = DriverParts()
    signer = _signer(runtime)
    wide = wide_area_parts(config, runtime)
    _gather(built, wide.parts)
    for entry in config.drivers:
        parts = entry.spec.build(entry.settings, _context(config, runtime, entry, wide.sites))
        for sink in parts.sinks:
            if signer is not None and isinstance(sink, MeterSigning):
                sink.sign_meters(signer)
        _gather(built, parts)
        if runtime.metrics is not None and parts.sources:
            runtime.metrics.refusals.update(entry.spec.refusals)
    if (metrics := runtime.metrics) is not None:
        metrics.links += built.links
        metrics.sources += built.health
        metrics.collectors += built.collectors
    return built


def _gather(built: DriverParts, parts: DriverParts) -> None:
    """Add one entry's parts to the service's, whatever the driver."""
    built.sources += parts.sources
    built.sinks += parts.sinks
    built.faces += parts.faces
    built.links += parts.links
    built.health += parts.health
    built.collectors += parts.collectors
    built.close += parts.close


def _context(
    config: Config, runtime: Runtime, entry: DriverEntry, sites: SiteLinks | None
) -> DriverContext:
    transport = entry.spec.transport
    served = tuple(
        offer_of(table)
        for table in config.tables
        if table.transport.driver == transport and table.transport.instance == entry.instance
    )
    return DriverContext(
        key=entry.key,
        tables=served,
        outbox=runtime.journal.outbox,
        latency=lambda sink: _latency(runtime, sink),
        epoch=lambda: runtime.journal.epoch,
        sites=sites,
    )


def _latency(runtime: Runtime, sink: str) -> Callable[[float], None] | None:
    metrics = runtime.metrics
    return metrics.event_to_sign_seconds.labels(sign=sink).observe if metrics else None


def _signer(runtime: Runtime) -> Signer | None:
    """The controller key's signer: the key the checkpoints are signed with."""
    schedule = runtime.sequencer.checkpoints
    if schedule is None:  # pragma: no cover - build_runtime always sets one
        return None
    return Signer.of(schedule.key)  # with the signer process: its signatures awaited
