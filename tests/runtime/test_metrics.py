"""What the metrics say of a journal, read as Prometheus reads them (docs/metrics.md).

A real journal file (tests/runtime/conftest.py: pool ``pool-a``, table ``T1`` on
progressive-1, verification from $500) and the metrics the sequencer feeds after each commit:

* a **hit** is a jackpot won, a pay from a pool's meter: ``jackpotd_hits_total`` counts those
  only; every pay won, the progressive paytable's fixed pays included, is in
  ``jackpotd_pays_total``;
* every counter whose label values the configuration gives (pools, tables, spots, lines) is at 0
  before anything happened, so that ``increase()`` counts the first event;
* what was an age is a Unix time: the oldest pending pay, the last time a table was heard;
* ``jackpotd_build_info`` names the version, the interpreter and the approved software.
"""

from __future__ import annotations

import platform
from datetime import datetime
from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families
from support.fake_clocks import START_WALL, Clocks
from support.journal.journal_rig import (
    AT,
    FIVE_ACES,
    NOTHING,
    POOL,
    TABLE,
    settle,
    wager,
)
from support.ledger.approvals import Site

from controller import __version__
from controller.events import HitVerified, ManifestApproved
from controller.runtime.broadcast import Broadcast
from controller.runtime.liveness import Liveness
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.revision import revision
from controller.runtime.sequencer import Sequencer

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from controller.ledger_journal.sqlite import Journal

HIT = "r2-settle/3/progressive"
STRAIGHT_FLUSH = ["9h", "Th", "Jh", "Qh", "Kh", "2c", "4d"]
"""A five-card straight flush: progressive-1 pays $100, a fixed pay."""


def scrape(metrics: ControllerMetrics) -> dict[str, Metric]:
    """The exposition a scraper gets by default (the text format), by family."""
    body, _content_type = metrics.exposition("")
    return {family.name: family for family in text_string_to_metric_families(body.decode())}


def values(family: Metric) -> dict[tuple[tuple[str, str], ...], float]:
    """A family's samples (``_created`` left out): sorted labels to value."""
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def metrics_of(table_journal: Journal, liveness: Liveness | None = None) -> ControllerMetrics:
    return ControllerMetrics(table_journal, Sequencer(table_journal, Broadcast()), liveness)


def play(table_journal: Journal, metrics: ControllerMetrics) -> None:
    """Seat 3's five aces (10% of the meter: a hit, pending) and seat 1's straight flush ($100)."""
    for event in (
        wager("r2-w3", "r2", 3),
        wager("r2-w4", "r2", 4),
        settle("r2-settle", "r2", {3: FIVE_ACES, 4: NOTHING}),
        wager("r3-w1", "r3", 1),
        settle("r3-settle", "r3", {1: STRAIGHT_FLUSH}),
    ):
        receipt = table_journal.append(event)
        assert receipt.applied, receipt.reason
        metrics.observe([receipt])


def test_hits_count_only_jackpots_paid_from_a_meter_and_pays_count_every_pay(
    table_journal: Journal,
) -> None:
    metrics = metrics_of(table_journal)
    play(table_journal, metrics)
    families = scrape(metrics)
    hits = values(families["jackpotd_hits"])
    at = (("pool", POOL), ("table", TABLE))
    assert hits[(("line", "five-aces"), *at)] == 1
    # The straight flush's $100 is a fixed pay of the progressive paytable: a pay, not a hit.
    assert (("line", "straight-flush"), *at) not in hits
    assert sum(hits.values()) == 1
    pays = values(families["jackpotd_pays"])
    progressive = (("kind", "progressive"),)
    assert pays[(*progressive, ("line", "five-aces"), ("table", TABLE))] == 1
    assert pays[(*progressive, ("line", "straight-flush"), ("table", TABLE))] == 1
    dollars = values(families["jackpotd_pays_dollars"])
    assert dollars[(*progressive, ("line", "straight-flush"), ("table", TABLE))] == 100.0
    assert families["jackpotd_hits"].documentation == (
        "Jackpots won: pays from a pool's meter (its meter lines)."
    )


def test_every_counter_with_labels_the_configuration_gives_is_at_zero_from_the_start(
    table_journal: Journal,
) -> None:
    families = scrape(metrics_of(table_journal))
    at = (("pool", POOL), ("table", TABLE))
    # progressive-1 pays two lines from the meter.
    assert values(families["jackpotd_hits"]) == {
        (("line", "five-aces"), *at): 0.0,
        (("line", "seven-card-straight-flush"), *at): 0.0,
    }
    assert values(families["jackpotd_contributions_dollars"]) == {at: 0.0}
    assert values(families["jackpotd_contributions_refunded_dollars"]) == {at: 0.0}
    assert values(families["jackpotd_wagers"]) == {(("spot", "progressive"), ("table", TABLE)): 0}
    refused = values(families["jackpotd_wagers_refused"])
    assert {labels[0][1] for labels in refused} == {"bonus", "ace-high", "insurance",
                                                    "progressive", "dynasty"}  # fmt: skip
    pays = values(families["jackpotd_pays"])
    assert {labels[1][1] for labels in pays} == {
        "seven-card-straight-flush", "five-aces", "royal-flush", "straight-flush",
        "four-of-a-kind", "full-house",
    }  # fmt: skip
    assert set(pays.values()) == {0.0}
    for name in ("device_sequence_conflicts", "device_sequence_gaps", "device_events_lost"):
        assert values(families[f"jackpotd_{name}"]) == {(("table", TABLE),): 0.0}, name
    assert values(families["jackpotd_rejected_inputs"]) == {(("reason", "ledger"),): 0.0}


def test_the_oldest_pending_pay_is_shown_as_the_unix_time_it_was_made(
    table_journal: Journal,
) -> None:
    metrics = metrics_of(table_journal)
    families = scrape(metrics)
    assert values(families["jackpotd_pending_pays"]) == {(): 0.0}
    assert values(families["jackpotd_pending_oldest_timestamp_seconds"]) == {(): 0.0}
    play(table_journal, metrics)
    families = scrape(metrics)
    assert values(families["jackpotd_pending_pays"]) == {(): 1.0}
    made = datetime.fromisoformat(AT).timestamp()
    assert values(families["jackpotd_pending_oldest_timestamp_seconds"]) == {(): made}
    # Verified: nothing is pending any more.
    assert table_journal.append(HitVerified("r2-verify", AT, HIT, "supervisor-7")).applied
    families = scrape(metrics)
    assert values(families["jackpotd_pending_oldest_timestamp_seconds"]) == {(): 0.0}


def test_each_table_shows_the_unix_time_it_was_last_heard(table_journal: Journal) -> None:
    clocks = Clocks()
    liveness = Liveness({TABLE: 60.0}, monotonic=clocks.monotonic, clock=lambda: AT)
    metrics = ControllerMetrics(
        table_journal, Sequencer(table_journal, Broadcast()), liveness, wall=clocks.wall
    )
    clocks.elapse(30)
    family = scrape(metrics)["jackpotd_table_last_event_timestamp_seconds"]
    # Never heard: since the controller started.
    assert values(family) == {(("table", TABLE),): START_WALL}
    liveness.seen(TABLE)
    clocks.elapse(5)
    family = scrape(metrics)["jackpotd_table_last_event_timestamp_seconds"]
    assert values(family) == {(("table", TABLE),): START_WALL + 30}


def test_build_info_names_the_version_the_interpreter_and_the_approved_software(
    table_journal: Journal,
) -> None:
    python = f"{platform.python_implementation()} {platform.python_version()}"
    family = scrape(metrics_of(table_journal))["jackpotd_build_info"]
    # No approved manifest yet: no software digest to name.
    labels = (("python", python), ("revision", revision()), ("software", ""))
    assert values(family) == {(*labels, ("version", __version__)): 1}
    assert family.type == "gauge"
    # Approved (start-up refuses to run anything else): its digest's first 12 hex digits.
    site = Site.create(table_journal)
    approval = ManifestApproved("manifest-1", AT, __version__, "ab" * 32, "cd" * 32, [], "mgr")
    site.append(site.sign(approval, "mgr"))
    family = scrape(metrics_of(table_journal))["jackpotd_build_info"]
    software = (
        ("python", python), ("revision", revision()), ("software", "ab" * 6),
        ("version", __version__),
    )  # fmt: skip
    assert values(family) == {software: 1}


def test_the_process_and_the_interpreter_are_on_the_controllers_registry(
    table_journal: Journal,
) -> None:
    families = scrape(metrics_of(table_journal))
    for name in ("process_cpu_seconds", "process_resident_memory_bytes",
                 "process_start_time_seconds", "process_open_fds", "process_max_fds"):  # fmt: skip
        assert families[name].samples, name
    (info,) = families["python_info"].samples
    assert info.labels["implementation"] == platform.python_implementation()
    assert info.labels["version"] == platform.python_version()
