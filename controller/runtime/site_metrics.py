"""Wide-area links as metrics: what the journal holds of central's properties and of central.

docs/wide-area.md ("Operations"), docs/metrics.md. Part of the families
:mod:`controller.runtime.metrics` builds at each scrape, read from the journal's state:

* at **central**, per linked property (label ``property``: Prometheus gives every series of a
  target a ``site`` label of its own, the controller's): what its ledger applied and
  reconciled of the property's chain and whether the link is halted;
* at a **property**: whether its wide-area wagers are open, as journaled (what the ledger
  enforces).

What the link's transport counts (central's drops, acknowledgements and when it last heard each
property; a property's connection to central, its backlog, what it published and refused) is
the driver's own families, handed in its parts (``drivers/mqtt/metrics.py``).

Only a property central links names a series: a client cannot add series by inventing names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

    from controller.ledger.state import LedgerState

LABEL = "property"
"""A linked property's label at central (``site`` is the scrape target's)."""


def wide_area_families(state: LedgerState) -> Iterator[Metric]:
    """Every wide-area family this controller's journal has: central's, a property's, or none."""
    yield from central(state)
    yield from property_link(state)


def central(state: LedgerState) -> Iterator[Metric]:
    """Per linked property: its chain as applied."""
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


def property_link(state: LedgerState) -> Iterator[Metric]:
    """A property's wide-area wagers as journaled."""
    chain = state.chain
    if chain is not None:
        is_open = GaugeMetricFamily(
            "jackpotd_wide_area_open",
            "1 while the property's wide-area progressive wagers are open (as journaled).",
        )
        is_open.add_metric([], 1.0 if chain.open else 0.0)
        yield is_open
