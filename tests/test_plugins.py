"""Drivers are plug-ins (docs/architecture.md, "Drivers"): found by name, typed by themselves.

A package installed beside the controller adds a driver through the ``jackpotd.drivers``
entry-point group, as python-can's interfaces do. The tests install a real one: a distribution
on the import path whose entry point names its spec. The configuration hands its section to the
driver's own settings type and checks, the loader checks what it names, and the service builds
its sink and feeds it updates, all without the controller importing it.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import TYPE_CHECKING, Any

import pytest
from support.config_files import BASE, error_of, load
from support.drivers.mosquitto import free_port

from controller import plugins
from controller.errors import ConfigurationError
from controller.outputs import MeterUpdate
from controller.plugins import BUILTIN, DriverSpec, UnknownDriverError
from controller.service.wiring import serve

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.runtime.view import Runtime

LAB_DRIVER = '''
"""A lab's meter recorder: a sink driver from outside the controller."""
from __future__ import annotations

import asyncio

import msgspec

from controller.outputs import MeterUpdate
from controller.plugins import DriverParts, DriverSpec

RECEIVED = []
METERED = asyncio.Event()


class RecorderSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    pool_id: str
    every_s: float = 1.0


class Recorder:
    def __init__(self, settings):
        self.name = f"recorder:{settings.name}"
        self.settings = settings

    async def run(self, updates):
        async for update in updates:
            RECEIVED.append(update)
            if isinstance(update, MeterUpdate):
                METERED.set()


def check(settings, checks, key, written):
    checks.positive(f"{key}.every_s", settings.every_s)
    return settings


SPEC = DriverSpec(
    name="{name}",
    section="{section}",
    settings=RecorderSettings,
    build=lambda settings, context: DriverParts(sinks=[Recorder(settings)]),
    many=True,
    check=check,
    instance=lambda settings: settings.name,
    references=lambda settings: [("pool_id", "pool", settings.pool_id)],
)
'''


def install(folder: Path, name: str = "lab-recorder", section: str = "lab_recorder") -> None:
    """A distribution on the import path: its module, and its entry point in its dist-info."""
    (folder / "lab_driver.py").write_text(
        LAB_DRIVER.replace("{name}", name).replace("{section}", section)
    )
    info = folder / "lab_driver-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lab-driver\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[jackpotd.drivers]\n{name} = lab_driver:SPEC\n")


@pytest.fixture
def lab_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    plugins.by_section.cache_clear()
    yield folder
    plugins.by_section.cache_clear()
    sys.modules.pop("lab_driver", None)


RECORDER = '\n[[lab_recorder]]\nname = "r1"\npool_id = "main"\nevery_s = 0.5\n'


def test_every_built_in_driver_has_a_spec_that_reads_its_own_section() -> None:
    plugins.by_section.cache_clear()
    sections = {name: spec.section for name, spec in plugins.by_section().items()}
    assert sections == {
        "alpha_sign": "alpha_sign",
        "broker": "broker",
        "serial": "serial",
        "simulator": "simulator",
    }
    for name in BUILTIN:
        spec = plugins.load(name)
        assert isinstance(spec, DriverSpec)
        assert spec.name == name


def test_an_unknown_driver_names_the_known_ones() -> None:
    with pytest.raises(UnknownDriverError, match=r"no driver named 'nope'; known: alpha-sign, "):
        plugins.load("nope")


def test_an_installed_driver_is_found_through_its_entry_point(lab_driver: Path) -> None:
    install(lab_driver)
    assert plugins.available()["lab-recorder"] == "lab_driver:SPEC"
    assert plugins.load("lab-recorder").section == "lab_recorder"
    assert "lab_recorder" in plugins.by_section()


def test_an_installed_driver_section_is_typed_and_checked_by_the_driver(
    lab_driver: Path, tmp_path: Path
) -> None:
    install(lab_driver)
    (entry,) = load(tmp_path, BASE + RECORDER).entries("lab_recorder")
    assert (entry.key, entry.instance, entry.settings.every_s) == ("lab_recorder[0]", "r1", 0.5)
    unknown = error_of(tmp_path, BASE + RECORDER + "colour = 'red'\n")
    assert (unknown.key, unknown.reason) == (
        "lab_recorder[0].colour",
        "Object contains unknown field `colour`",
    )
    assert error_of(tmp_path, BASE + RECORDER.replace("0.5", "0")).key == "lab_recorder[0].every_s"
    pool = error_of(tmp_path, BASE + RECORDER.replace('"main"', '"other"'))
    assert (pool.key, pool.reason) == (
        "lab_recorder[0].pool_id",
        "no pool 'other'; configured: main",
    )
    twice = error_of(tmp_path, BASE + RECORDER + RECORDER)
    assert twice.key == "lab_recorder[1].name"


def test_a_section_nobody_reads_is_refused_as_before(tmp_path: Path) -> None:
    error = error_of(tmp_path, BASE + RECORDER)
    assert (error.key, error.reason) == (
        "lab_recorder",
        "Object contains unknown field `lab_recorder`",
    )


def test_two_drivers_reading_one_section_are_refused(lab_driver: Path) -> None:
    install(lab_driver, name="lab-broker", section="broker")
    with pytest.raises(
        ConfigurationError, match=r"drivers 'mqtt' and 'lab-broker' both read \[broker\]"
    ):
        plugins.by_section()


async def test_the_service_builds_an_installed_drivers_sink_and_feeds_it(
    lab_driver: Path, tmp_path: Path
) -> None:
    install(lab_driver)
    web = f'\n[web]\nhost = "127.0.0.1"\nport = {free_port()}\n'
    journal = f'id = "c1"\njournal = "{tmp_path / "journal.db"}"\n'
    config = load(tmp_path, BASE.replace('id = "c1"\n', journal) + RECORDER + web)
    recorder = importlib.import_module("lab_driver")  # installed by the fixture

    received: list[Any] = recorder.RECEIVED
    stop = asyncio.Event()
    started: asyncio.Queue[Runtime] = asyncio.Queue()
    task = asyncio.create_task(serve(config, stop, started=lambda r, _u: started.put_nowait(r)))
    try:
        async with asyncio.timeout(30):
            await started.get()
            await recorder.METERED.wait()
    finally:
        stop.set()
        runtime = await task
        assert runtime is not None
        runtime.journal.close()
    meters = [update for update in received if isinstance(update, MeterUpdate)]
    assert meters[0].pool_id == "main"
