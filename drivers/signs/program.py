"""The sign station as a driver's program: what ``jackpotd sign`` finds by name.

:data:`PROGRAM` is listed in :data:`controller.plugins.BUILTIN_PROGRAMS` as a string, so the
command imports no driver (docs/architecture.md, "Drivers"). The station follows the meters
through the MQTT driver's ``[broker]`` section of its own file (docs/signs.md).
"""

from __future__ import annotations

from controller.plugins import ProgramSpec
from drivers.signs.station import run_sign_station

PROGRAM = ProgramSpec(name="sign", run=run_sign_station, link="mqtt")
