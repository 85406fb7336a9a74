"""``jackpotd sign`` shows only the controller's signed meters (docs/signs.md, "Signed meters").

A station run as systemd runs it, on a real mosquitto and an emulated Alpha sign: an intruder
with a write right on ``meter/<pool>`` publishes, retained, a fake meter at ``(epoch, seq)`` =
(10^9, 10^9), unsigned and then signed by a key of its own. The sign shows neither, and the
leader's meters after them are shown: the forgeries never raised the order. A station whose
file names no controller key refuses to start, saying which key to write.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import TYPE_CHECKING

from cli.test_cli_sign import ROOT, Face, meter, publish, shows, station, station_file
from support.drivers.mqtt_tables import running

from controller.meter_signature import Signer
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

HUGE = 10**9
INTRUDER = ControllerKey.generate()


def test_a_forged_meter_at_a_huge_epoch_and_seq_is_never_shown_and_the_leaders_go_on(
    mosquitto: Broker, tmp_path: Path
) -> None:
    faces = {"main": Face("main-sign")}
    faces["main"].open()
    config = station_file(tmp_path, mosquitto, faces)
    forged = meter("main", 999_999_00, HUGE, HUGE)

    async def scenario() -> None:
        face = faces["main"]
        async with running(face.run()), station(config):
            await publish(mosquitto, meter("main", 400_00, 10, 2))
            await shows(face, "$400.00")
            await publish(mosquitto, forged, signer=None)
            await publish(mosquitto, forged, signer=Signer(INTRUDER.key_id, INTRUDER.sign))
            await publish(mosquitto, meter("main", 401_00, 11, 2))
            await shows(face, "$401.00")
            await publish(mosquitto, meter("main", 402_00, 12, 2))
            await shows(face, "$402.00")

    try:
        asyncio.run(scenario())
    finally:
        faces["main"].close()
    assert faces["main"].history is not None
    assert "$999,999.00" not in faces["main"].history, faces["main"].history
    assert not [text for text in faces["main"].history if "999" in text]


def test_a_station_without_a_controller_key_refuses_to_start(
    mosquitto: Broker, tmp_path: Path
) -> None:
    face = Face("main-sign")
    config = station_file(tmp_path, mosquitto, {"main": face})
    text = config.read_text(encoding="utf-8")
    config.write_text(
        "\n".join(line for line in text.splitlines() if "controller_keys" not in line),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "controller", "sign", "--config", str(config)],
        capture_output=True, text=True, check=False, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"{config}: sign.controller_keys: write the public key" in done.stderr
