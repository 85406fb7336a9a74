"""The wide-area link's parts reach /metrics as the service builds them (docs/metrics.md).

controller/service/drivers.py and controller/service/wide_area.py. A property's and central's
real configuration files (tests/support/widearea/wide_area_config.py), started as the daemon starts
them (build_runtime: the journal, the configuration's events), their drivers built: the
property's uplink to central and central's answers to its linked properties are registered
with the metrics, and every series is there from the start, before anything connects.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from support.config_files import load
from support.web.scrapes import scrape
from support.widearea.wide_area_config import CENTRAL, PROPERTY, edit, write_files

from controller.security.controller_key import ControllerKey
from controller.service.drivers import build_drivers
from controller.service.startup_checks import AuthorityPolicy
from controller.service.wiring import build_runtime
from drivers.mqtt.metrics import SiteTrafficFamilies, UplinkFamilies
from drivers.mqtt.site_answers import DROP_REASONS
from drivers.mqtt.site_uplink import SiteUplink
from drivers.mqtt.source import MqttSource
from drivers.mqtt.uplink_refusals import REFUSALS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.plugins import DriverParts
    from controller.runtime.metrics import ControllerMetrics

BROKER = '[broker]\nhost = "127.0.0.1"\nport = 1883\n\n'
"""Central's own broker, where its linked properties publish."""


@contextlib.contextmanager
def started(
    folder: Path, text: str, controller_id: str
) -> Iterator[tuple[ControllerMetrics, DriverParts]]:
    """The daemon's start-up on ``text`` (unsigned), its drivers built: metrics and parts."""
    write_files(folder)
    line = f'id = "{controller_id}"\n'
    config = load(folder, edit(text, line, f'{line}journal = "journal.db"\n'))
    runtime = build_runtime(config, authority=AuthorityPolicy(), key=ControllerKey.generate())
    try:
        assert runtime.metrics is not None
        yield runtime.metrics, build_drivers(config, runtime)
    finally:
        runtime.journal.close()


def test_a_propertys_link_to_central_is_on_its_metrics_from_the_start(tmp_path: Path) -> None:
    with started(tmp_path, PROPERTY, "c1") as (metrics, parts):
        (uplink,) = [source for source in parts.sources if isinstance(source, SiteUplink)]
        assert [type(each) for each in metrics.collectors] == [UplinkFamilies]
        found = scrape(metrics)
    assert {name: found[name] for name in (
        "jackpotd_wide_area_open", "jackpotd_wide_area_connected", "jackpotd_wide_area_acked_seq",
        "jackpotd_wide_area_backlog", "jackpotd_wide_area_published",
        "jackpotd_wide_area_central_last_heard_timestamp_seconds",
    )} == {
        "jackpotd_wide_area_open": {(): 0.0},  # closed until central reconciles the property
        "jackpotd_wide_area_connected": {(): 0.0},
        "jackpotd_wide_area_acked_seq": {(): 0.0},
        "jackpotd_wide_area_backlog": {(): 0.0},
        "jackpotd_wide_area_published": {(): 0.0},
        "jackpotd_wide_area_central_last_heard_timestamp_seconds": {(): uplink.heard_at},
    }  # fmt: skip
    assert found["jackpotd_wide_area_refused"] == {
        (("reason", reason),): 0.0 for reason in REFUSALS
    }
    assert not any(name.startswith("jackpotd_site_") for name in found)


def test_centrals_answers_to_its_linked_properties_are_on_its_metrics_from_the_start(
    tmp_path: Path,
) -> None:
    with started(tmp_path, BROKER + CENTRAL, "central-1") as (metrics, parts):
        (source,) = [source for source in parts.sources if isinstance(source, MqttSource)]
        assert source.sites is not None
        kinds = {type(each) for each in metrics.collectors}
        assert SiteTrafficFamilies in kinds
        assert UplinkFamilies not in kinds
        found = scrape(metrics)
    sites = ("atlantic", "boardwalk.2")  # the properties central's file links
    assert found["jackpotd_site_dropped"] == {
        (("property", site), ("reason", reason)): 0.0 for site in sites for reason in DROP_REASONS
    }
    for name in ("jackpotd_site_acks", "jackpotd_site_applied_seq", "jackpotd_site_halted"):
        assert found[name] == {(("property", site),): 0.0 for site in sites}, name
    heard = found["jackpotd_site_last_heard_timestamp_seconds"]
    assert heard == {(("property", site),): source.sites.started for site in sites}
    assert not any(name.startswith("jackpotd_wide_area") for name in found)
