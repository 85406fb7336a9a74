"""Wide-area links as Prometheus reads them: central's linked properties (docs/metrics.md).

controller/runtime/site_metrics.py. A real central journal (tests/runtime/conftest.py's pool and
table) linking two properties with real keys, and central's real answers to them
(drivers/mqtt/site_answers.py) taking their messages as its MQTT source hands them over:

* every series of a linked property is there from the start, its counters at 0, so that
  ``increase()`` counts the first drop;
* what the ledger applied, reconciled and halted is read from the journal's state;
* a property that is not linked names no series: a client cannot add series by inventing
  names (it is refused, and counted as such).

The property's side (``jackpotd_wide_area_*``) is read from its uplink at work over a real
broker: tests/drivers/mqtt/test_mqtt_site_uplink.py.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from support.journal.journal_rig import POOL
from support.web.scrapes import scrape
from support.widearea.site_chains import WAGER, LinkedProperty

from controller.runtime.broadcast import Broadcast
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey
from controller.widearea.messages import Contribution
from drivers.mqtt.metrics import SiteTrafficFamilies
from drivers.mqtt.site_answers import DROP_REASONS, SiteAdmission, SiteAnswers
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from controller.ledger_journal.sqlite import Journal


def central(
    table_journal: Journal,
) -> tuple[ControllerMetrics, SiteAnswers, dict[str, LinkedProperty]]:
    """Central's metrics and its source's answers, two properties linked."""
    properties = {site: LinkedProperty(site) for site in ("atlantic", "boardwalk")}
    for prop in properties.values():
        assert table_journal.append(prop.linked()).applied
    answers = SiteAnswers(Topics("hub"), JournalSiteLinks(table_journal, ControllerKey.generate()))
    metrics = ControllerMetrics(table_journal, Sequencer(table_journal, Broadcast()), None)
    metrics.collectors.append(SiteTrafficFamilies(answers))
    return metrics, answers, properties


def per(site: str, **labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"property": site, **labels}.items()))


def test_every_linked_property_has_its_series_from_the_start(table_journal: Journal) -> None:
    metrics, answers, _ = central(table_journal)
    found = scrape(metrics)
    sites = ("atlantic", "boardwalk")
    assert found["jackpotd_site_dropped"] == {
        per(site, reason=reason): 0.0 for site in sites for reason in DROP_REASONS
    }
    assert set(DROP_REASONS) == {"applied", "in-flight", "gap", "halted"}
    assert found["jackpotd_site_acks"] == {per(site): 0.0 for site in sites}
    for name in ("jackpotd_site_applied_seq", "jackpotd_site_reconciled_seq"):
        assert found[name] == {per(site): 0.0 for site in sites}
    assert found["jackpotd_site_halted"] == {per(site): 0.0 for site in sites}
    # Never heard: since the source started, so that a property silent from the start alerts.
    heard = found["jackpotd_site_last_heard_timestamp_seconds"]
    assert heard == {per(site): answers.started for site in sites}
    # Not a property's: no family of its own.
    assert not any(name.startswith("jackpotd_wide_area") for name in found)


def test_central_counts_what_its_source_drops_and_reads_the_chain_from_the_journal(
    table_journal: Journal,
) -> None:
    metrics, answers, properties = central(table_journal)
    atlantic = properties["atlantic"]
    first, second = atlantic.contributions(1, 2)
    before = time.time()
    assert answers.admit(first.message) is SiteAdmission.SUBMIT
    assert answers.admit(first.message) is SiteAdmission.IN_FLIGHT  # not committed yet
    assert table_journal.append(first).applied
    assert answers.admit(first.message) is SiteAdmission.APPLIED  # a resend
    assert answers.admit(second.message) is SiteAdmission.SUBMIT
    assert table_journal.append(second).applied
    assert table_journal.append(atlantic.reported()).applied  # reconciled through 2
    _lost, fourth = atlantic.contributions(3, 2)  # the third is lost on the way: a gap
    assert answers.admit(fourth.message) is SiteAdmission.GAP
    found = scrape(metrics)
    dropped = found["jackpotd_site_dropped"]
    assert {reason: dropped[per("atlantic", reason=reason)] for reason in DROP_REASONS} == {
        "applied": 1.0, "in-flight": 1.0, "gap": 1.0, "halted": 0.0,
    }  # fmt: skip
    assert found["jackpotd_site_applied_seq"][per("atlantic")] == 2.0
    assert found["jackpotd_site_reconciled_seq"][per("atlantic")] == 2.0
    assert before <= found["jackpotd_site_last_heard_timestamp_seconds"][per("atlantic")]
    assert found["jackpotd_site_last_heard_timestamp_seconds"][per("boardwalk")] < before


def test_a_halted_link_shows_and_a_stranger_names_no_series(table_journal: Journal) -> None:
    metrics, answers, properties = central(table_journal)
    boardwalk = properties["boardwalk"]
    broken = boardwalk.say(Contribution(POOL, "t1", "r1", 1, WAGER), prev="f" * 64)
    assert answers.admit(broken.message) is SiteAdmission.SUBMIT
    assert table_journal.append(broken).applied  # the ledger halts the link: the property's doing
    assert answers.admit(broken.message) is SiteAdmission.HALTED  # its resend
    stranger = LinkedProperty("stranger").say(Contribution(POOL, "t1", "r1", 1, WAGER))
    assert answers.admit(stranger.message) is SiteAdmission.NOT_LINKED
    found = scrape(metrics)
    assert found["jackpotd_site_halted"] == {per("atlantic"): 0.0, per("boardwalk"): 1.0}
    assert found["jackpotd_site_dropped"][per("boardwalk", reason="halted")] == 1.0
    assert found["jackpotd_site_applied_seq"][per("boardwalk")] == 0.0
    named = {value for series in found.values() for labels in series for _, value in labels}
    assert "stranger" not in named
