"""What a scraper reads of the controller's metrics: each family's samples, by their labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from controller.runtime.metrics import ControllerMetrics

Series = dict[tuple[tuple[str, str], ...], float]
"""A family's samples (``_created`` left out): sorted labels to value."""


def scrape(metrics: ControllerMetrics) -> dict[str, Series]:
    """Each family of the exposition (the text format), by name."""
    text = metrics.exposition("")[0].decode()
    return {
        family.name: {
            tuple(sorted(sample.labels.items())): sample.value
            for sample in family.samples
            if not sample.name.endswith("_created")
        }
        for family in text_string_to_metric_families(text)
    }
