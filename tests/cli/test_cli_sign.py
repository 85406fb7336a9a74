"""``jackpotd sign``: a sign station run as systemd runs it, on a real broker and emulated signs.

The station (drivers/signs/station.py) follows the meters over MQTT and drives each of its
signs (docs/signs.md, "Sign stations"): two emulated Alpha signs on ptys (drivers/signs/
emulator.py) of two pools, fed by retained meters a real mosquitto broker holds. A zombie
leader's older retained meter does not roll a sign back (docs/ha.md, "Brokers and followers").
SIGTERM stops it, exit 0; its unit passes ``systemd-analyze verify``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import aiomqtt
from support.drivers.mqtt_tables import SITE, TOPICS, running, within

from controller.meter_signature import Signer
from controller.outputs import MeterUpdate
from controller.security.controller_key import ControllerKey
from drivers.mqtt.outgoing import meter_payload
from drivers.signs.emulator import VirtualAlphaSign

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from support.drivers.mosquitto import Broker

ROOT = Path(__file__).parents[2]
UNIT = ROOT / "systemd" / "jackpotd-sign.service"
AT = "2025-06-01T21:14:03.118Z"
STOP_S = 30
KEY = ControllerKey.generate()
"""The controller's key: the leader signs its meters with it, the station names it."""
SIGNER = Signer(KEY.key_id, KEY.sign)


class Face(VirtualAlphaSign):
    """An emulated sign that wakes the test whenever it reads a frame."""

    changed: asyncio.Event | None = None
    history: list[str] | None = None

    def feed(self, buffer: bytearray) -> None:
        """Read the frames, note what the sign showed, then wake the test."""
        super().feed(buffer)
        self.history = self.history or []
        if not self.history or self.history[-1] != self.text:
            self.history.append(self.text)
        if self.changed is not None:
            self.changed.set()


async def shows(face: Face, text: str) -> None:
    """Wait (bounded) until the sign shows ``text``."""

    async def wait() -> None:
        face.changed = asyncio.Event()
        while face.text != text:
            await face.changed.wait()
            face.changed.clear()

    await within(wait(), f"{face.name} to show {text}")


def station_file(folder: Path, broker: Broker, faces: dict[str, Face]) -> Path:
    signs = "".join(
        f'\n[[alpha_sign]]\nname = "{pool}-sign"\nurl = "{face.url}"\npool_id = "{pool}"\n'
        'bytesize = 8\nparity = "N"\nmin_interval_s = 0.05\nconfigure_pause_s = 0.0\n'
        for pool, face in faces.items()
    )
    path = folder / "sign.toml"
    path.write_text(
        f'[sign]\nname = "pit-2"\nsite = "{SITE}"\ncontroller_keys = ["{KEY.public_key}"]\n\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {broker.port}\nbackoff_cap_s = 0.5\n{signs}',
        encoding="utf-8",
    )
    return path


def meter(pool: str, cents: int, seq: int, epoch: int) -> MeterUpdate:
    return MeterUpdate(AT, seq, pool, cents, 1_000, 0, 50_000, epoch=epoch)


async def publish(broker: Broker, *meters: MeterUpdate, signer: Signer | None = SIGNER) -> None:
    """The meters, retained, as the leader publishes them (signed) or a forger (``signer``)."""
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="leader") as leader:
        for update in meters:
            topic = TOPICS.meter(update.pool_id)
            await leader.publish(topic, meter_payload(update, signer), qos=1, retain=True)


@contextlib.asynccontextmanager
async def station(config: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "controller", "sign", "--config", str(config),
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_a_station_shows_each_pools_meter_and_a_zombie_cannot_roll_it_back(
    mosquitto: Broker, tmp_path: Path
) -> None:
    faces = {pool: Face(f"{pool}-sign") for pool in ("main", "side")}
    for face in faces.values():
        face.open()
    config = station_file(tmp_path, mosquitto, faces)

    async def scenario() -> tuple[int, bytes]:
        main, side = faces["main"], faces["side"]
        async with running(main.run()), running(side.run()), station(config) as process:
            await publish(mosquitto, meter("main", 400_00, 10, 2), meter("side", 123_45, 11, 2))
            await shows(main, "$400.00")
            await shows(side, "$123.45")
            # A former leader (epoch 1) wakes and says its last meter again, retained, then
            # the leader goes on: the sign skips the zombie's and shows the leader's.
            await publish(mosquitto, meter("main", 390_00, 99, 1), meter("main", 401_00, 12, 2))
            await shows(main, "$401.00")
            assert main.history is not None
            assert "$390.00" not in main.history, main.history
            process.send_signal(signal.SIGTERM)
            assert process.stderr is not None
            _, stderr = await asyncio.gather(
                asyncio.wait_for(process.wait(), STOP_S), process.stderr.read()
            )
            return process.returncode or 0, stderr

    try:
        status, stderr = asyncio.run(scenario())
    finally:
        for face in faces.values():
            face.close()
    assert status == 0, stderr.decode()
    assert b"sign station sign-pit-2: 2 sign(s)" in stderr


def test_a_stale_meter_retained_before_the_station_starts_is_shown_until_a_newer_comes(
    mosquitto: Broker, tmp_path: Path
) -> None:
    # A station that starts takes the broker's retained meter as its first: it has no order
    # yet to hold it to (docs/signs.md, "Sign stations").
    faces = {"main": Face("main-sign")}
    faces["main"].open()
    config = station_file(tmp_path, mosquitto, faces)

    async def scenario() -> None:
        face = faces["main"]
        await publish(mosquitto, meter("main", 250_00, 7, 3))
        async with running(face.run()), station(config):
            await shows(face, "$250.00")
            await publish(mosquitto, meter("main", 260_00, 8, 3))
            await shows(face, "$260.00")

    try:
        asyncio.run(scenario())
    finally:
        faces["main"].close()


def test_the_sign_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: make test installs systemd"
    text = UNIT.read_text(encoding="utf-8")
    for line in ("Type=notify", "WatchdogSec=", "User=jackpotd", "ProtectSystem=strict",
                 "jackpotd sign --config"):  # fmt: skip
        assert line in text, line
    unit = tmp_path / "jackpotd-sign.service"
    jackpotd = Path(sys.executable).parent / "jackpotd"
    unit.write_text(text.replace("/opt/jackpotd/bin/jackpotd", str(jackpotd)), encoding="utf-8")
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "jackpotd-sign.service" in line] == []
