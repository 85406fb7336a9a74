"""A new driver with metrics of its own plugs in without touching a core file.

docs/architecture.md, "Drivers": a driver is found through ``controller.plugins`` by name, and
what it builds (:class:`~controller.plugins.DriverParts`) is generic: sources, sinks, faces,
connections, health, and prometheus collectors of the families it owns. The driver below is
defined in this file and nowhere else: a sink counting the meter updates it is given, and its
own counter family ``jackpotd_lab_tally_updates_total`` (label ``tally``). An entry point in a
dist-info folder on the import path registers it (``jackpotd.drivers``, as python-can's
interfaces are found); ``[[lab_tally]]`` in the TOML file configures it; ``serve`` builds and
starts it; and its family is on ``/metrics`` beside the core's.

Core files touched to add it: 0 (no file under ``controller/`` or ``drivers/`` names it:
checked below). Files added: this one, 1.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
import msgspec
import pytest
from prometheus_client.core import CounterMetricFamily
from support.config_files import BASE, load
from support.drivers.mosquitto import free_port

from controller import plugins
from controller.outputs import MeterUpdate
from controller.plugins import DriverContext, DriverParts, DriverSpec
from controller.service.wiring import serve

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from prometheus_client.metrics_core import Metric

    from controller.outputs import Update
    from controller.runtime.view import Runtime

REPO = Path(__file__).resolve().parents[1]
FAMILY = "jackpotd_lab_tally_updates"


class TallySettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One ``[[lab_tally]]`` entry."""

    name: str


class Tally:
    """A sink that counts the meter updates it is given."""

    def __init__(self, settings: TallySettings) -> None:
        self.name = f"lab-tally:{settings.name}"
        self.meters = 0
        self.counted = asyncio.Event()

    async def run(self, updates: AsyncIterator[Update]) -> None:
        """Count every meter update until cancelled."""
        async for update in updates:
            if isinstance(update, MeterUpdate):
                self.meters += 1
                self.counted.set()


@dataclass(frozen=True, slots=True)
class TallyFamilies:
    """The driver's own family: meter updates counted, per tally."""

    tally: Tally

    def collect(self) -> Iterator[Metric]:
        """The counter, the tally's series in it."""
        family = CounterMetricFamily(FAMILY, "Meter updates a lab tally counted.", labels=["tally"])
        family.add_metric([self.tally.name], self.tally.meters)
        yield family


BUILT: list[Tally] = []


def build(settings: TallySettings, _context: DriverContext) -> DriverParts:
    """The entry's sink and its collector."""
    tally = Tally(settings)
    BUILT.append(tally)
    return DriverParts(sinks=[tally], collectors=[TallyFamilies(tally)])


SPEC = DriverSpec(
    name="lab-tally",
    section="lab_tally",
    settings=TallySettings,
    build=build,
    many=True,
    instance=lambda settings: settings.name,
)


@pytest.fixture
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``lab-tally`` registered through an entry point naming this module's spec."""
    folder = tmp_path / "site"
    info = folder / "lab_tally-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lab-tally\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[jackpotd.drivers]\nlab-tally = {__name__}:SPEC\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setitem(sys.modules, __name__, sys.modules[__name__])
    importlib.invalidate_caches()
    plugins.by_section.cache_clear()
    BUILT.clear()
    yield
    plugins.by_section.cache_clear()


def test_no_core_file_names_the_test_only_driver() -> None:
    for package in ("controller", "drivers"):
        for path in (REPO / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "lab_tally" not in text, path
            assert "lab-tally" not in text, path


async def test_a_drivers_own_metric_family_is_on_metrics_once_configured_and_started(
    registered: None,  # noqa: ARG001 - the fixture registers the driver
    tmp_path: Path,
) -> None:
    port = free_port()
    web = f'\n[web]\nhost = "127.0.0.1"\nport = {port}\n'
    journal = f'id = "c1"\njournal = "{tmp_path / "journal.db"}"\n'
    tallies = '\n[[lab_tally]]\nname = "a"\n\n[[lab_tally]]\nname = "b"\n'
    config = load(tmp_path, BASE.replace('id = "c1"\n', journal) + tallies + web)
    assert [entry.instance for entry in config.entries("lab_tally")] == ["a", "b"]
    stop = asyncio.Event()
    started: asyncio.Queue[Runtime] = asyncio.Queue()
    task = asyncio.create_task(serve(config, stop, started=lambda r, _u: started.put_nowait(r)))
    try:
        async with asyncio.timeout(30):
            await started.get()
            for tally in BUILT:
                await tally.counted.wait()
            async with (
                aiohttp.ClientSession() as session,
                session.get(f"http://127.0.0.1:{port}/metrics") as response,
            ):
                text = await response.text()
    finally:
        stop.set()
        runtime = await task
        assert runtime is not None
        runtime.journal.close()
    lines = [line for line in text.splitlines() if line.startswith(f"{FAMILY}_total{{")]
    # One family for both entries, merged by name; each tally's series in it.
    assert text.count(f"# TYPE {FAMILY}_total counter") + text.count(f"# TYPE {FAMILY} ") == 1
    assert sorted(line.split(" ")[0] for line in lines) == [
        f'{FAMILY}_total{{tally="lab-tally:a"}}',
        f'{FAMILY}_total{{tally="lab-tally:b"}}',
    ]
    assert all(float(line.split(" ")[1]) >= 1 for line in lines)
