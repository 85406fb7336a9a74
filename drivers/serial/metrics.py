"""The serial driver's own metric families (docs/metrics.md), handed to the core in its parts.

``jackpotd_serial_frame_errors`` (every reason the line refuses a frame with, each at 0 until
counted), ``jackpotd_serial_connected`` and ``jackpotd_serial_reconnects``, per line (label
``port``: ``serial:<name>``). The core names none of these; it merges the families of every
``[[serial]]`` entry by name at each scrape (``controller.plugins.DriverParts.collectors``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric


class LineCounts(Protocol):
    """What a serial line counts (drivers.serial.link.SerialSource)."""

    name: str
    errors: Counter[str]
    refusals: tuple[str, ...]
    """Every reason in ``errors`` could have, each shown at 0 until counted."""
    connected: bool
    reconnects: int


@dataclass(frozen=True, slots=True)
class SerialFamilies:
    """One line's frames refused by why, whether its port is open, its reopenings."""

    line: LineCounts

    def collect(self) -> Iterator[Metric]:
        """The three families, the line's series in each."""
        line = self.line
        frame_errors = CounterMetricFamily(
            "jackpotd_serial_frame_errors", "Serial frames refused.", labels=["port", "reason"]
        )
        for reason in sorted({*line.refusals, *line.errors}):
            frame_errors.add_metric([line.name, reason], line.errors.get(reason, 0))
        serial_up = GaugeMetricFamily(
            "jackpotd_serial_connected", "1 while the port is open.", labels=["port"]
        )
        serial_up.add_metric([line.name], 1.0 if line.connected else 0.0)
        serial_reconnects = CounterMetricFamily(
            "jackpotd_serial_reconnects", "Reopenings of a serial port.", labels=["port"]
        )
        serial_reconnects.add_metric([line.name], line.reconnects)
        yield from (frame_errors, serial_up, serial_reconnects)
