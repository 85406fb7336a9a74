"""The table agent as a driver's program: what ``jackpotd agent`` finds by name.

:data:`PROGRAM` is listed in :data:`controller.plugins.BUILTIN_PROGRAMS` as a string, so the
command imports no driver (docs/architecture.md, "Drivers"). The agent reaches the controller
through the MQTT driver's ``[broker]`` section of its own file (docs/ha.md, "Table agents").
"""

from __future__ import annotations

from controller.plugins import ProgramSpec
from drivers.agent.service import run_agent

PROGRAM = ProgramSpec(name="agent", run=run_agent, link="mqtt")
