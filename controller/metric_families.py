"""Counter families whose known series start at 0: shared by the core's metrics and drivers'.

``increase()`` and ``rate()`` need two samples of a series, so a counter whose series appears
with its first event hides that event from them (docs/metrics.md, "Conventions"). Part of the
vocabulary, so that a driver defining its own families (``controller.plugins.DriverParts``
``collectors``) builds them the way the core does, without importing the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from prometheus_client.core import CounterMetricFamily

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

K = TypeVar("K", bound=tuple[str, ...])


def counter_family(  # noqa: PLR0913 - a family's name, help and labels, its label sets and counts
    name: str,
    documentation: str,
    labels: list[str],
    *,
    known: Iterable[K],
    counts: Mapping[K, float],
    scale: Callable[[float], float] = float,
) -> CounterMetricFamily:
    """A counter family: every known label set, at 0 until counted, and every one counted."""
    family = CounterMetricFamily(name, documentation, labels=labels)
    for key in sorted({*known, *counts}):
        family.add_metric(list(key), scale(counts.get(key, 0)))
    return family
