"""Prometheus metrics: read from the live state at each scrape, latencies observed as they happen.

Names follow the Prometheus conventions (``jackpotd_`` prefix, ``_total`` for counters, base
units: seconds; money in dollars, as gauges and counters are floats anyway and dashboards
read dollars; moments as Unix times, never ages). Every metric is documented in
docs/metrics.md, the process's own (``process_*``, ``python_info``) beside them, in the text
format or OpenMetrics as the scraper asks. Nothing here is on a money path: the journal is the
record, metrics are a view.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Histogram, PlatformCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from controller.effects import (
    Contributed,
    ContributionRefunded,
    PayoutMade,
    Share,
    WagerRefused,
    parse_fraction,
)
from controller.ledger.levels import SEPARATOR as LEVEL_SEPARATOR
from controller.metric_families import counter_family
from controller.runtime.build_info import build_info
from controller.runtime.driver_metrics import merged
from controller.runtime.metric_labels import known_labels
from controller.runtime.role_metrics import sequencer_role
from controller.runtime.safeguard_metrics import (
    authentications,
    checkpoints,
    clock_steps,
    passkey_clones,
)
from controller.runtime.site_metrics import wide_area_families

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    from prometheus_client.metrics_core import Metric

    from controller.ledger_journal import LedgerJournal
    from controller.plugins import HealthReporting, LinkView
    from controller.ports import Receipt
    from controller.runtime.liveness import Liveness
    from controller.runtime.sequencer import Sequencer

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass
class StreamCounts:
    """The display's ``/events`` streams: its cap, those open, those refused at the cap."""

    cap: int = 0
    open: int = 0
    refused: int = 0


def _dollars(cents: float) -> float:
    return cents / 100


class ControllerMetrics(Collector):
    """The controller's metrics; :meth:`observe` is called by the sequencer after each commit."""

    def __init__(
        self,
        journal: LedgerJournal,
        sequencer: Sequencer,
        liveness: Liveness | None,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.journal = journal
        self.sequencer = sequencer
        self.liveness = liveness
        self.wall = wall
        """The wall clock that turns the liveness monitor's ages into Unix times."""
        self.manifest = journal.state.manifest
        """The software approved when the controller started: start-up checked it is what runs."""
        self.links: list[LinkView] = []
        """The drivers' connections (broker links, serial lines), for the display."""
        self.collectors: list[Collector] = []
        """The drivers' own metric families (:attr:`controller.plugins.DriverParts.collectors`),
        merged by name at each scrape (controller/runtime/driver_metrics.py)."""
        self.refusals: set[str] = set()
        """Every reason the configured sources refuse input with, each shown at 0 until counted
        (their drivers' ``refusals``); ``ledger`` is always there."""
        self.sources: list[HealthReporting] = []
        """Sources whose health ``/healthz`` and the metrics report."""
        self.streams = StreamCounts()
        """Replaced by the display's own counts when it starts (controller/display)."""
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        self.commit_seconds = Histogram(
            "jackpotd_journal_commit_seconds",
            "Time to write and fsync one journal transaction (a batch of events).",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.event_to_commit_seconds = Histogram(
            "jackpotd_event_to_commit_seconds",
            "Time from an event reaching the sequencer to its journal commit.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.event_to_sign_seconds = Histogram(
            "jackpotd_event_to_sign_seconds",
            "Time from an update reaching a sign's driver to the frame being written to the sign.",
            ["sign"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.wagers: Counter[tuple[str, str]] = Counter()
        self.contributions: defaultdict[tuple[str, str], float] = defaultdict(float)
        self.refunded: defaultdict[tuple[str, str], float] = defaultdict(float)
        self.refused_wagers: Counter[tuple[str, str]] = Counter()
        self.hits: Counter[tuple[str, str, str]] = Counter()
        self.pays: Counter[tuple[str, str, str]] = Counter()
        self.pay_cents: Counter[tuple[str, str, str]] = Counter()
        self.registry.register(self)

    def observe(self, receipts: Sequence[Receipt]) -> None:
        """Count what committed receipts did, and record the sequencer's latencies."""
        commits, waits = self.sequencer.stats.drain_latencies()
        for seconds in commits:
            self.commit_seconds.observe(seconds)
        for seconds in waits:
            self.event_to_commit_seconds.observe(seconds)
        for receipt in receipts:
            if receipt.duplicate:
                continue
            for effect in receipt.effects:
                if isinstance(effect, Contributed):
                    self.contributions[effect.pool_id, effect.table_id] += _total(effect)
                elif isinstance(effect, ContributionRefunded):
                    self.refunded[effect.pool_id, effect.table_id] += _total(effect)
                elif isinstance(effect, WagerRefused):
                    self.refused_wagers[effect.table_id, effect.spot] += 1
                elif isinstance(effect, PayoutMade):
                    line = effect.line or "none"
                    if effect.kind != "envy":
                        self.wagers[effect.table_id, effect.spot] += 1
                    # A hit is a jackpot won: a pay from the meter, as `jackpotd hits` lists them.
                    if effect.kind == "progressive" and effect.from_meter_cents > 0:
                        self.hits[effect.pool_id or "", effect.table_id, line] += 1
                    if effect.win_cents:
                        key = (effect.table_id, effect.kind, line)
                        self.pays[key] += 1
                        self.pay_cents[key] += effect.win_cents

    def describe(self) -> Iterable[Metric]:
        """Families are built per scrape."""
        return []

    def collect(self) -> Iterator[Metric]:
        """Build every metric family from the current state."""
        yield build_info(self.manifest)
        yield from self._pools()
        yield from self._activity()
        yield from self._tables()
        yield from self._health()
        yield clock_steps(self.sequencer.clock_watch)
        yield from self._streams()
        yield from self._hostile_input()
        yield from authentications(self.journal.state)
        yield passkey_clones(self.journal.state)
        yield from checkpoints(self.sequencer.checkpoints)
        yield from wide_area_families(self.journal.state)
        yield from merged(self.collectors)

    def _pools(self) -> Iterator[Metric]:
        families = {
            "meter": GaugeMetricFamily(
                "jackpotd_pool_meter_dollars", "The meter shown.", labels=["pool"]
            ),
            "reserve": GaugeMetricFamily(
                "jackpotd_pool_reserve_dollars", "The reserve.", labels=["pool"]
            ),
            "overflow": GaugeMetricFamily(
                "jackpotd_pool_overflow_dollars", "The overflow.", labels=["pool"]
            ),
            "seed": GaugeMetricFamily(
                "jackpotd_pool_seed_dollars", "The meter seed.", labels=["pool"]
            ),
            # A pool's life (controller/ledger/pool_life.py): an alert on 0 finds a pool a
            # supervisor took out of play and nobody put back.
            "in_play": GaugeMetricFamily(
                "jackpotd_pool_in_play",
                "1 while the pool takes wagers, 0 while suspended or retired.",
                labels=["pool", "status"],
            ),
        }
        paid = CounterMetricFamily(
            "jackpotd_pool_paid_dollars", "Paid from the meter.", labels=["pool"]
        )
        house = CounterMetricFamily(
            "jackpotd_pool_house_funding_dollars", "Seeds funded by the house.", labels=["pool"]
        )
        # A level of a multi-level pool is a pool of its own, POOL.LEVEL (controller/ledger/
        # levels.py): its meter is in the families above under that id, and this says whose
        # level it is, so that a dashboard groups the grand, major, minor and mini of one pool.
        level = GaugeMetricFamily(
            "jackpotd_pool_level",
            "1 for each level of a multi-level pool: the pool it belongs to, its name, its kind.",
            labels=["pool", "parent_pool", "level", "kind"],
        )
        must_hit_by = GaugeMetricFamily(
            "jackpotd_pool_must_hit_by_dollars",
            "A mystery level's ceiling: it hits before its meter reaches this (never its trigger).",
            labels=["pool"],
        )
        for pool_id, pool in sorted(self.journal.state.pools.items()):
            parent, dot, name = pool_id.partition(LEVEL_SEPARATOR)
            ceiling = pool.terms.must_hit_by_cents
            if dot:
                kind = "hand" if ceiling is None else "mystery"
                level.add_metric([pool_id, parent, name, kind], 1)
            if ceiling is not None:
                must_hit_by.add_metric([pool_id], _dollars(ceiling))
            families["meter"].add_metric([pool_id], _dollars(pool.meter_cents))
            families["reserve"].add_metric([pool_id], _dollars(pool.reserve_cents))
            families["overflow"].add_metric([pool_id], _dollars(pool.overflow_cents))
            families["seed"].add_metric([pool_id], _dollars(pool.terms.seed_cents))
            families["in_play"].add_metric(
                [pool_id, pool.status or "in play"], 0 if pool.status else 1
            )
            paid.add_metric([pool_id], _dollars(pool.paid_cents))
            house.add_metric([pool_id], _dollars(pool.house_funding_cents))
        yield from families.values()
        yield paid
        yield house
        yield level
        yield must_hit_by

    def _activity(self) -> Iterator[Metric]:
        known = known_labels(self.journal.state)
        rejected = Counter(self.sequencer.stats.rejected)
        rejected["ledger"] += self.sequencer.stats.events.get("rejected", 0)
        table_spot, pool_table, pay = (
            ["table", "spot"],
            ["pool", "table"],
            ["table", "kind", "line"],
        )
        families: list[tuple[str, str, list[str], Iterable[Any], Mapping[Any, float], bool]] = [
            ("wagers", "Settled wagers.", table_spot, known.wagers, self.wagers, False),
            ("contributions_dollars", "Contributions to pools.", pool_table, known.contributing,
             self.contributions, True),
            ("contributions_refunded_dollars", "Contributions reversed by voids.", pool_table,
             known.contributing, self.refunded, True),
            ("wagers_refused", "Chips refused at lock.", table_spot, known.refused,
             self.refused_wagers, False),
            ("hits", "Jackpots won: pays from a pool's meter (its meter lines).",
             ["pool", "table", "line"], known.hits, self.hits, False),
            ("pays", "Pays won (any amount won on a wager), pending ones included.", pay,
             known.pays, self.pays, False),
            ("pays_dollars", "The amounts of those pays.", pay, known.pays, self.pay_cents, True),
            ("rejected_inputs", "Inputs refused.", ["reason"],
             [(reason,) for reason in {"ledger", *self.refusals}],
             {(reason,): count for reason, count in rejected.items()}, False),
        ]  # fmt: skip
        for name, documentation, labels, values, counts, in_dollars in families:
            yield counter_family(
                f"jackpotd_{name}",
                documentation,
                labels,
                known=values,
                counts=counts,
                scale=_dollars if in_dollars else float,
            )

    def _tables(self) -> Iterator[Metric]:
        online = GaugeMetricFamily(
            "jackpotd_table_online", "1 if the table takes wagers.", labels=["table"]
        )
        heard = GaugeMetricFamily(
            "jackpotd_table_last_event_timestamp_seconds",
            "When the table was last heard (Unix time; the controller's start if never).",
            labels=["table"],
        )
        now = self.wall()
        for table_id in sorted(self.journal.state.tables):
            live = self.journal.state.table_states.get(table_id)
            is_online = (live is None or live.online) and self.sequencer.available
            online.add_metric([table_id], 1.0 if is_online else 0.0)
            if self.liveness is not None:
                heard.add_metric([table_id], now - self.liveness.seconds_since(table_id))
        yield online
        yield heard

    def _health(self) -> Iterator[Metric]:
        pending = GaugeMetricFamily(
            "jackpotd_pending_pays", "Pays awaiting a supervisor's verification."
        )
        pending.add_metric([], len(self.journal.state.pending))
        oldest = GaugeMetricFamily(
            "jackpotd_pending_oldest_timestamp_seconds",
            "When the oldest pay awaiting verification was made (Unix time; 0 when none).",
        )
        oldest.add_metric([], self._oldest_pending_timestamp())
        up = GaugeMetricFamily("jackpotd_journal_writable", "0 while failing closed.")
        up.add_metric([], 1.0 if self.sequencer.failed_reason is None else 0.0)
        failures = CounterMetricFamily("jackpotd_journal_errors", "Journal write failures.")
        failures.add_metric([], self.sequencer.stats.journal_failures)
        held = CounterMetricFamily("jackpotd_held_rounds", "Rounds held for a supervisor.")
        held.add_metric([], self.sequencer.stats.held_rounds)
        yield from (pending, oldest, up, failures, held)
        yield from sequencer_role(
            standby=False, epoch=self.journal.epoch, head=self.journal.head[0]
        )

    def _streams(self) -> Iterator[Metric]:
        streams = GaugeMetricFamily("jackpotd_display_streams", "Open /events streams.")
        streams.add_metric([], self.streams.open)
        cap = GaugeMetricFamily("jackpotd_display_streams_max", "The [web] max_streams cap.")
        cap.add_metric([], self.streams.cap)
        refused = CounterMetricFamily(
            "jackpotd_display_streams_refused", "/events streams refused at the cap (503)."
        )
        refused.add_metric([], self.streams.refused)
        yield from (streams, cap, refused)

    def _hostile_input(self) -> Iterator[Metric]:
        """What the alerts on devices watch (docs/faults.md): conflicts, gaps, floods, poison."""
        stats = self.sequencer.stats
        tables = [(table,) for table in self.journal.state.tables]
        per_table = {
            "jackpotd_device_sequence_conflicts": (
                "Event ids reused by a device with other content (journaled, not applied).",
                stats.conflicts,
            ),
            "jackpotd_device_sequence_gaps": (
                "Gaps in a device's sequence numbers: events sent that never arrived.",
                stats.gaps,
            ),
            "jackpotd_device_events_lost": ("Events those gaps left out.", stats.lost_events),
        }
        for name, (documentation, counts) in per_table.items():
            by_table = {(table,): count for table, count in counts.items()}
            yield counter_family(name, documentation, ["table"], known=tables, counts=by_table)
        left_out = CounterMetricFamily(
            "jackpotd_rejections_not_journaled",
            "Rejections beyond the rate journaled one by one (counted in a row per interval).",
        )
        left_out.add_metric([], stats.rejections_left_out)
        internal = CounterMetricFamily(
            "jackpotd_internal_errors", "Events the controller failed on (a fault of its own)."
        )
        internal.add_metric([], stats.internal_errors)
        failing = GaugeMetricFamily(
            "jackpotd_source_failing", "1 while a source keeps failing.", labels=["source"]
        )
        dead = CounterMetricFamily(
            "jackpotd_dead_letters",
            "Messages parked after failing again and again.",
            labels=["source"],
        )
        for source in self.sources:
            failing.add_metric([source.name], 0.0 if source.health.trouble is None else 1.0)
            dead.add_metric([source.name], source.health.dead_letters)
        yield from (left_out, internal, failing, dead)

    def _oldest_pending_timestamp(self) -> float:
        if not self.journal.state.pending:
            return 0.0
        oldest = self.journal.oldest_pending_at()
        return 0.0 if oldest is None else datetime.fromisoformat(oldest).timestamp()

    def exposition(self, accept: str) -> tuple[bytes, str]:
        """``/metrics`` in the format the scraper's ``Accept`` header asks for, and its type.

        OpenMetrics when asked for (Prometheus asks for it first), else the text format 0.0.4.
        """
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type


def _total(effect: Share) -> float:
    parts = (effect.to_meter, effect.to_reserve, effect.to_overflow)
    return float(sum(parse_fraction(part) for part in parts))
