"""A table agent between pty devices and a real broker, and a controller's MQTT source behind it.

:func:`agent_config` is an agent's configuration for one pty line and a test broker (short
delays, so that closing and resending happen within a test's time); :class:`Device` is a
device at the far end of a pty line, speaking the reference serial protocol and resending a
frame until it is answered, as a real bet sensor does; :func:`agent_file` writes the same
configuration as a TOML file, for ``jackpotd agent`` run as a process. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.agent.settings import AgentConfig
from drivers.agent.service import Agent
from drivers.mqtt.settings import BrokerSettings
from drivers.serial.framing import Frame, FrameReader, encode_frame
from drivers.serial.settings import SerialPortSettings
from drivers.simulator_links.serial import PtyPair
from support.drivers.mqtt_tables import SITE, WAIT_S, running

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from controller.agent.store import AgentOutbox

TABLE: Final = "t1"
RESEND_S: Final = 0.3
"""How long a test device waits for an answer before it sends its frame again."""
REPO: Final = Path(__file__).resolve().parents[3]


def broker_settings(port: int) -> BrokerSettings:
    return BrokerSettings(
        host="127.0.0.1",
        port=port,
        client_id=f"table-{TABLE}",
        site=SITE,
        keepalive_s=5,
        backoff_initial_s=0.02,
        backoff_cap_s=0.3,
    )


def line_settings(url: str) -> SerialPortSettings:
    return SerialPortSettings(
        name="line-1", url=url, table_id=TABLE, backoff_initial_s=0.01, backoff_cap_s=0.05
    )


def agent_config(
    tmp_path: Path,
    broker_port: int,
    device_path: str,
    *,
    closed_after_s: float = 1.0,
    heartbeat_s: float = 0.1,
) -> AgentConfig:
    return AgentConfig(
        source="test",
        table_id=TABLE,
        outbox=tmp_path / "agent.db",
        closed_after_s=closed_after_s,
        heartbeat_s=heartbeat_s,
        resend_initial_s=0.2,
        resend_cap_s=0.8,
        state_file=tmp_path / "table-state.json",
        broker=broker_settings(broker_port),
        serial=(line_settings(device_path),),
    )


def agent_file(tmp_path: Path, broker_port: int, device_path: str) -> Path:
    """The configuration of :func:`agent_config`, as ``jackpotd agent`` reads it."""
    path = tmp_path / "agent.toml"
    path.write_text(
        f'[agent]\ntable_id = "{TABLE}"\noutbox = "agent.db"\nsite = "{SITE}"\n'
        "closed_after_s = 1.0\nheartbeat_s = 0.1\nresend_initial_s = 0.2\nresend_cap_s = 0.8\n"
        'state_file = "table-state.json"\n\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {broker_port}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.02\nbackoff_cap_s = 0.3\n\n"
        f'[[serial]]\nname = "line-1"\nurl = "{device_path}"\n'
        "backoff_initial_s = 0.01\nbackoff_cap_s = 0.05\n",
        encoding="utf-8",
    )
    return path


async def start_agent_process(config: Path) -> asyncio.subprocess.Process:
    """``jackpotd agent --config FILE`` as its own process (so that it can be killed -9).

    Its log goes to ``agent.log`` beside the configuration, appended at each start.
    """
    with (config.parent / "agent.log").open("ab") as log:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "controller",
            "agent",
            "--config",
            str(config),
            "--log-level",
            "DEBUG",
            cwd=REPO,
            stderr=log,
        )


class Device:
    """A device on a pty line: sends a frame until it is answered (ACK or NAK), as sensors do."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._frames = FrameReader()
        self._answers: list[str] = []
        self.sent = 0
        """Frames written, resends included."""

    async def send(self, payload: str) -> str:
        """Send ``payload`` until the agent answers it; the answer (``ACK,...``/``NAK,...``)."""
        kind, device, seq, *_ = payload.split(",")
        del kind
        wanted = (f"ACK,{device},{seq}", f"NAK,{device},{seq},")
        async with asyncio.timeout(WAIT_S):
            while True:
                self._writer.write(encode_frame(payload))
                await self._writer.drain()
                self.sent += 1
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RESEND_S):
                        return await self._answer(wanted)

    async def write_raw(self, data: bytes) -> None:
        """Put bytes on the line as they are (noise, a broken frame)."""
        self._writer.write(data)
        await self._writer.drain()

    async def _answer(self, wanted: tuple[str, str]) -> str:
        while True:
            for answer in self._answers:
                if answer == wanted[0] or answer.startswith(wanted[1]):
                    self._answers.remove(answer)
                    return answer
            chunk = await self._reader.read(4096)
            if not chunk:
                raise EOFError("the line closed")
            self._answers += [f.payload for f in self._frames.feed(chunk) if isinstance(f, Frame)]


@contextlib.asynccontextmanager
async def device_on(pty: PtyPair) -> AsyncIterator[Device]:
    """A device at the far end of the pty line."""
    reader, writer = await pty.open()
    yield Device(reader, writer)


@contextlib.asynccontextmanager
async def agent_at_table(
    broker_port: int,
    tmp_path: Path,
    outbox: AgentOutbox,
    change: Callable[[AgentConfig], AgentConfig] | None = None,
) -> AsyncIterator[tuple[Agent, Device]]:
    """An agent running on a pty line (``change`` adjusts its configuration), and its device."""
    with PtyPair() as pty:
        config = agent_config(tmp_path, broker_port, pty.path)
        agent = Agent(config if change is None else change(config), outbox)
        async with running(agent.run()), device_on(pty) as device:
            yield agent, device


def bets(count: int, *, start: int = 1) -> list[str]:
    """``count`` odds-spot bets of one sensor (chips on and off seat 3's bonus spot)."""
    return [f"BET,bs-1,{n},3,bonus,{n % 2},500" for n in range(start, start + count)]
