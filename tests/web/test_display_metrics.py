"""``/metrics`` of a freshly started ``jackpotd run``, scraped over HTTP as Prometheus does.

The real daemon (``python -m controller run``, its journal approved as a site's manager
readies it: tests/support/runtime/floor.py) serves two tables on pty serial lines and one on a real
mosquitto, whose devices have said nothing yet. docs/metrics.md:

* every counter family whose label values the controller knows at start (its pools and tables,
  their spots and lines, its sources) has its series at 0 before anything happened, so that
  ``increase()`` and ``rate()`` count the first event;
* ``jackpotd_build_info`` names the version, the interpreter and the approved software, beside
  the process's own metrics (``process_*``, ``python_info``);
* the scraper chooses the format (``Accept``): OpenMetrics when it asks for it, else the text
  format 0.0.4.
"""

from __future__ import annotations

import contextlib
import platform
import subprocess
import sys
import urllib.request
from typing import TYPE_CHECKING

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families
from support.drivers.mosquitto import Broker
from support.runtime.floor import POOL, ROOT, WAIT_S, approved_site, free_port, write_config

from controller import __version__
from controller.ledger_journal.sqlite import Journal
from drivers.mqtt.refusals import REFUSALS as MQTT_REFUSALS
from drivers.serial.refusals import REFUSALS as SERIAL_REFUSALS
from drivers.simulator_links import PtyPair

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    from prometheus_client.metrics_core import Metric

LINES = ("t1", "t2")
TABLES = (*LINES, "t3")
"""t1 and t2 on serial lines, t3 on MQTT."""
OPENMETRICS = "application/openmetrics-text"
PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0;q=0.5,"
    "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
)
"""What Prometheus asks for when it scrapes (its default scrape protocols)."""
FUNDED = "jackpotd_pool_house_funding_dollars"


class Running:
    """``jackpotd run`` in a child process; its URL and the software digest it was approved."""

    def __init__(self, folder: Path) -> None:
        self.broker = Broker(folder / "mosquitto")
        self.broker.start()
        self.lines = [PtyPair() for _ in LINES]
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/metrics"
        paths = {table: line.path for table, line in zip(LINES, self.lines, strict=True)}
        config = write_config(folder, "metrics", paths, port)
        with config.open("a") as more:
            more.write(
                f'\n[broker]\nhost = "{self.broker.host}"\nport = {self.broker.port}\n\n'
                f'[[tables]]\nid = "t3"\ntransport = "mqtt"\nbonus = "fortune-1"\n'
                f'progressive = "progressive-1"\npool = "{POOL}"\n'
            )
        approved_site(config)
        with Journal(folder / "journal.db") as journal:
            assert journal.state.manifest is not None
            self.software = journal.state.manifest.software
        self.log = folder / "jackpotd.log"
        with self.log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "controller", "run", "--config", str(config)],
                stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
            )  # fmt: skip
        assert self.process.stdout is not None
        assert "meter display" in self.process.stdout.readline(), self.log.read_text()

    def get(self, accept: str | None = None) -> tuple[str, str]:
        """GET /metrics: its content type and body."""
        request = urllib.request.Request(self.url, headers={"Accept": accept} if accept else {})  # noqa: S310 - our own daemon's URL
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:  # noqa: S310
            return response.headers["Content-Type"], response.read().decode()

    def stop(self) -> None:
        """SIGTERM, SIGKILL if it has not stopped within WAIT_S; the lines and broker closed."""
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.communicate(timeout=WAIT_S)
        self.process.kill()  # nothing if it has stopped
        self.process.communicate()
        for line in self.lines:
            line.close()
        self.broker.close()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    daemon = Running(tmp_path_factory.mktemp("metrics"))
    try:
        yield daemon
    finally:
        daemon.stop()


def by_name(families: Iterable[Metric]) -> dict[str, Metric]:
    return {family.name: family for family in families}


def test_a_fresh_controller_shows_every_counter_it_can_name_at_zero(running: Running) -> None:
    content_type, body = running.get()
    families = by_name(text_string_to_metric_families(body))
    counters = {name: f for name, f in families.items() if f.type == "counter"}
    assert len(counters) >= 20
    empty = {name for name, family in counters.items() if not family.samples}
    assert not empty
    # Since start, all at 0; the pool's house funding is its seed, funded when it opened.
    for name, family in counters.items():
        if name.startswith("jackpotd_") and name != FUNDED:
            assert {sample.value for sample in family.samples} == {0.0}, name
    # Refused input, by every reason the configured drivers can refuse with, before any came.
    refused = {s.labels["reason"] for s in families["jackpotd_rejected_inputs"].samples}
    assert refused == {"ledger", *MQTT_REFUSALS, *SERIAL_REFUSALS}
    frames = {
        (s.labels["port"], s.labels["reason"])
        for s in families["jackpotd_serial_frame_errors"].samples
    }
    assert frames == {(f"serial:{t}-line", r) for t in LINES for r in SERIAL_REFUSALS}
    # Labelled by what the configuration names: each table, its pool, its spots, its lines.
    hits = {(s.labels["pool"], s.labels["table"]) for s in families["jackpotd_hits"].samples}
    assert hits == {(POOL, table) for table in TABLES}
    wagers = {(s.labels["table"], s.labels["spot"]) for s in families["jackpotd_wagers"].samples}
    assert wagers == {(t, spot) for t in TABLES for spot in ("bonus", "progressive")}
    kinds = {s.labels["kind"] for s in families["jackpotd_pays"].samples}
    assert kinds == {"win", "progressive", "envy"}
    sources = {s.labels["source"] for s in families["jackpotd_dead_letters"].samples}
    assert sources == {"mqtt", *(f"serial:{table}-line" for table in LINES)}
    clients = {s.labels["client"] for s in families["jackpotd_mqtt_reconnects"].samples}
    assert clients == {"mqtt", "mqtt-display"}
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"


def test_build_info_and_the_process_are_on_the_page(running: Running) -> None:
    _content_type, body = running.get()
    families = by_name(text_string_to_metric_families(body))
    (build,) = families["jackpotd_build_info"].samples
    labels = dict(build.labels)
    assert labels.pop("revision")  # its value: tests/runtime/test_revision.py
    assert labels == {
        "version": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "software": running.software[:12],
    }
    assert build.value == 1
    (started,) = families["process_start_time_seconds"].samples
    (table,) = [
        s for s in families["jackpotd_table_last_event_timestamp_seconds"].samples
        if s.labels["table"] == "t1"
    ]  # fmt: skip
    # Never heard: since the start of the process, give or take its start-up.
    assert started.value <= table.value <= started.value + WAIT_S
    assert families["process_resident_memory_bytes"].samples[0].value > 0
    assert families["process_open_fds"].samples[0].value > 0
    (python,) = families["python_info"].samples
    assert python.labels["implementation"] == platform.python_implementation()


def test_openmetrics_is_served_when_the_scraper_asks_for_it(running: Running) -> None:
    content_type, body = running.get(PROMETHEUS_ACCEPT)
    assert content_type.startswith(f"{OPENMETRICS}; version=1.0.0; charset=utf-8")
    assert body.endswith("# EOF\n")
    # prometheus_client's OpenMetrics parser is unannotated (its text parser is typed).
    families = by_name(openmetrics_families(body))  # type: ignore[no-untyped-call]
    # OpenMetrics names a counter family without its _total; its samples keep it.
    hits = families["jackpotd_hits"]
    assert hits.type == "counter"
    assert {sample.name for sample in hits.samples} == {"jackpotd_hits_total"}
    assert families["jackpotd_build_info"].samples[0].labels["version"] == __version__
    text_type, text = running.get("text/plain")
    assert text_type == "text/plain; version=0.0.4; charset=utf-8"
    assert "# EOF" not in text
    # The text format gives a histogram's _created series a family of its own.
    text_families = by_name(text_string_to_metric_families(text))
    assert set(families) == {name for name in text_families if not name.endswith("_created")}
