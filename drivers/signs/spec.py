"""The Alpha sign driver's spec: each ``[[alpha_sign]]`` entry is one LED sign on its own line.

A sign shows one pool's meter and names the tables it hangs over (docs/signs.md); the loader
checks both exist and that no other entry opens the sign's line. ``url = "emulator://<name>"``
runs an emulated sign on a pty instead (:mod:`drivers.signs.emulator`): the demo's, and a
lab's without hardware. The display page shows emulated signs beside the meters. Each sign's
stale updates dropped are the driver's own family (:mod:`drivers.signs.metrics`).
"""

from __future__ import annotations

from typing import Final

import msgspec

from controller.plugins import DriverContext, DriverParts, DriverSpec
from drivers.signs.metrics import FollowerFamilies
from drivers.signs.serial_sign import AlphaSignSettings

EMULATOR: Final = "emulator://"


def build(settings: AlphaSignSettings, context: DriverContext) -> DriverParts:
    """The sign's sink, and its emulator if the line is an emulated one."""
    from drivers.signs.emulator import VirtualAlphaSign  # noqa: PLC0415 - pyserial only with a sign
    from drivers.signs.serial_sign import AlphaSign  # noqa: PLC0415

    parts = DriverParts()
    if settings.url.startswith(EMULATOR):
        face = VirtualAlphaSign(settings.url.removeprefix(EMULATOR) or settings.name)
        face.open()
        settings = msgspec.structs.replace(settings, url=face.url)
        parts.faces.append(face)
        parts.close.append(face.close)
    latency = context.latency(settings.name)
    sign = AlphaSign(settings, on_latency=latency)
    parts.sinks.append(sign)
    parts.collectors.append(FollowerFamilies(sign.behaviour.order))
    return parts


def _references(sign: AlphaSignSettings) -> list[tuple[str, str, str]]:
    tables = [(f"tables[{index}]", "table", table) for index, table in enumerate(sign.tables)]
    return [("pool_id", "pool", sign.pool_id), *tables]


SPEC = DriverSpec(
    name="alpha-sign",
    section="alpha_sign",
    settings=AlphaSignSettings,
    build=build,
    many=True,
    instance=lambda sign: sign.name,
    references=_references,
    devices=lambda sign: () if sign.url.startswith(EMULATOR) else (sign.url,),
    describe=lambda sign: f"{sign.url}, pool {sign.pool_id}",
)
