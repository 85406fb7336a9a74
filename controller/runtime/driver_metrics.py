"""The drivers' own metric families on the controller's ``/metrics``, merged by name.

A driver defines its families in its own package and hands collectors in its parts
(:attr:`controller.plugins.DriverParts.collectors`); the core names none of them. Each
configured entry brings its own collectors, so two serial lines each yield a
``jackpotd_serial_connected`` family: the families of one name are merged here into one, their
samples in the entries' order, as the exposition format wants each family once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.metrics_core import Metric

from controller.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from prometheus_client.registry import Collector


def merged(collectors: Iterable[Collector]) -> Iterator[Metric]:
    """Every family the collectors yield, one per name, in the order first seen.

    Two drivers giving one name different types is a driver's bug: refused in words.
    """
    families: dict[str, Metric] = {}
    for collector in collectors:
        for family in collector.collect():
            known = families.get(family.name)
            if known is None:
                known = Metric(family.name, family.documentation, family.type, family.unit)
                families[family.name] = known
            elif known.type != family.type:
                raise ConfigurationError(
                    f"metric {family.name}: a {family.type} here, a {known.type} elsewhere"
                )
            known.samples += family.samples
    yield from families.values()
