"""``jackpotd agent``'s parts run together: the serial lines, the uplink, the table's gate.

:class:`Agent` builds the parts from an :class:`controller.agent.settings.AgentConfig` and the
outbox the command line opened (the store lives with the journal's SQL), and runs them until
cancelled. Each part reconnects on its own (:func:`controller.backoff.keep_connected`); the
gate watcher shows the table CLOSED when the controller has gone quiet for
``closed_after_s`` and OPEN once it answers again (docs/ha.md, "Table agents").
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from controller.agent.gate import TableGate
from controller.agent.resend import ResendDelay
from controller.errors import ConfigurationError
from drivers.agent.line import AgentLine
from drivers.agent.state import FaultLog, TableStateView
from drivers.agent.uplink import AgentUplink
from drivers.mqtt.settings import BrokerSettings
from drivers.serial.settings import SerialPortSettings

if TYPE_CHECKING:
    from controller.agent.settings import AgentConfig
    from controller.agent.store import AgentOutbox


class Agent:
    """One table's agent (see the module docstring)."""

    def __init__(self, config: AgentConfig, outbox: AgentOutbox) -> None:
        broker = config.broker
        if not isinstance(broker, BrokerSettings):
            raise ConfigurationError(f"{config.source}: broker: not the MQTT driver's settings")
        ports = [port for port in config.serial if isinstance(port, SerialPortSettings)]
        if len(ports) != len(config.serial):
            raise ConfigurationError(f"{config.source}: serial: not the serial driver's settings")
        self.config = config
        self.outbox = outbox
        self.gate = TableGate(config.closed_after_s)
        self.faults = FaultLog(outbox)
        self.view = TableStateView(config.table_id, self.faults, config.state_file)
        resend = ResendDelay(config.resend_initial_s, config.resend_cap_s)
        self.uplink = AgentUplink(
            broker,
            config.table_id,
            outbox=outbox,
            faults=self.faults,
            gate=self.gate,
            resend=resend,
            heartbeat_s=config.heartbeat_s,
            signer=config.signer,
        )
        self.lines = [
            AgentLine(port, outbox, self.faults, self.table_open, self.uplink.stored)
            for port in ports
        ]

    def table_open(self) -> bool:
        """Whether progressive wagers are taken now."""
        return self.gate.is_open(asyncio.get_running_loop().time())

    async def run(self) -> None:
        """Run every part until cancelled (a part that ends with a bug ends the agent)."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.uplink.run())
            for line in self.lines:
                tasks.create_task(line.run())
            tasks.create_task(self._watch_gate())

    async def _watch_gate(self) -> None:
        """Show the table's state at each change: closed on silence, open when heard."""
        heard = self.uplink.heard()
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            table_open = self.gate.is_open(now)
            reason = "the controller acknowledges" if table_open else self.gate.why_closed(now)
            self.view.show(table_open=table_open, reason=reason)
            heard.clear()
            closes_at = self.gate.closes_at()
            wait = max(0.0, closes_at - now) if table_open and closes_at is not None else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await heard.wait()


async def run_agent(config: AgentConfig, outbox: AgentOutbox) -> None:
    """Run the agent until cancelled: what ``jackpotd agent`` calls."""
    await Agent(config, outbox).run()
