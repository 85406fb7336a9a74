"""The chaos test's floor, a process of its own: simulated tables behind the real agent code.

Run as ``python -m support.ha.chaos.floor SETTINGS.json`` (tests/ and the repository on
``PYTHONPATH``). Each table is what ``jackpotd agent`` runs on a table's hardware, without
its serial port: a :class:`drivers.simulator.SimulatedTable` plays rounds, each device message
goes through the agent's own answer to a frame (:meth:`drivers.agent.line.AgentLine.answer`:
stored in the table's durable outbox, then ``ACK``, or ``NAK table-closed``), and the agent's
uplink (:class:`drivers.agent.uplink.AgentUplink`) forwards it over MQTT with (table, boot,
seq) until the controller's cumulative acknowledgement covers it. Fifty agent processes
would not fit two cores beside the cluster; one process running fifty agents' parts speaks
the same wire protocol. Followers (:class:`drivers.mqtt.follower.MeterFollower`, as signs
run) record every meter they apply.

What happens is written to ``FOLDER/floor.jsonl``, one JSON object a line, for the harness
(:mod:`support.ha.chaos.checks`): ``stored`` (an event the agent acknowledged to its device,
with whether the table was open by the agent's own last acknowledgement heard), ``refused``
(a progressive wager refused while the table was closed), ``commit`` (the first
acknowledgement naming a journal row above every one before, with its wall-clock time: the
failover's end), ``applied`` (a follower applied a meter) and ``regression`` (a follower's
``(epoch, seq)`` went backwards).

Commands, one a line on standard input, each answered with one JSON line on standard
output: ``drain`` (no new rounds; the rounds under way end, and every outbox is acknowledged
to its end), ``meters JSON`` (until every follower shows these meters), ``resume`` (rounds
again), ``stop``. Every wait is bounded by ``wait_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from controller.agent.gate import TableGate
from controller.agent.resend import ResendDelay
from controller.events import BetSensed, BetsLocked
from controller.journal.sqlite.agent_outbox import AgentOutboxStore
from controller.outputs import MeterUpdate
from controller.rules.spots import Spot
from drivers.agent.line import AgentLine
from drivers.agent.state import FaultLog
from drivers.agent.uplink import AgentUplink
from drivers.mqtt.agent_wire import decode_ack
from drivers.mqtt.follower import MeterFollower
from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.settings import BrokerSettings
from drivers.serial.settings import SerialPortSettings
from drivers.simulator import SimulatedTable, TablePlan
from drivers.simulator_links.serial import serial_payload

if TYPE_CHECKING:
    from controller.events import DeviceInput


class FloorSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What the harness gives the floor (written as JSON)."""

    folder: str
    site: str
    mqtt_host: str
    mqtt_port: int
    tables: list[str]
    seed: int
    round_pause_s: float
    hit_every: int
    followers: int
    closed_after_s: float
    heartbeat_s: float
    wait_s: float


class Record:
    """``floor.jsonl``: one line per fact, flushed at once (the process may be killed)."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def write(self, **fields: Any) -> None:
        """One fact, on disk at once."""
        self._file.write(json.dumps(fields, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


@dataclass
class Commits:
    """The highest journal row any acknowledgement named: a new one is a commit seen."""

    record: Record
    high: int = 0

    def heard(self, journal_seq: int, epoch: int) -> None:
        """An acknowledgement named ``journal_seq``: a commit seen if above every one before."""
        if journal_seq > self.high:
            self.high = journal_seq
            self.record.write(kind="commit", seq=journal_seq, epoch=epoch, t=time.time())


class ObservedUplink(AgentUplink):
    """The agent's uplink, telling the floor each acknowledgement it takes."""

    commits: Commits
    heard_at: float | None = None
    """The floor's monotonic time of the last acknowledgement the agent accepted."""

    def take_ack(self, data: bytes) -> None:
        """The agent's own judgement, then the commit it names, if taken."""
        before = self.acks
        super().take_ack(data)
        if self.acks == before:
            return  # refused: it trims nothing and keeps nothing open
        self.heard_at = time.monotonic()
        with contextlib.suppress(PayloadError):
            ack = decode_ack(data)
            self.commits.heard(ack.journal_seq, ack.epoch)


@dataclass
class Table:
    """One table: its simulated devices, its agent's outbox, line answer and uplink."""

    table_id: str
    settings: FloorSettings
    record: Record
    commits: Commits
    rng: random.Random
    outbox: AgentOutboxStore = field(init=False)
    gate: TableGate = field(init=False)
    uplink: ObservedUplink = field(init=False)
    line: AgentLine = field(init=False)
    simulated: SimulatedTable = field(init=False)
    playing: asyncio.Event = field(default_factory=asyncio.Event)
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        s = self.settings
        folder = Path(s.folder)
        self.outbox = AgentOutboxStore(folder / f"{self.table_id}.db", self.table_id)
        self.gate = TableGate(s.closed_after_s)
        faults = FaultLog(self.outbox)
        broker = BrokerSettings(
            host=s.mqtt_host,
            port=s.mqtt_port,
            client_id=f"table-{self.table_id}",
            site=s.site,
            keepalive_s=5,
            backoff_initial_s=0.05,
            backoff_cap_s=1.0,
        )
        self.uplink = ObservedUplink(
            broker,
            self.table_id,
            outbox=self.outbox,
            faults=faults,
            gate=self.gate,
            resend=ResendDelay(1.0, 4.0),
            heartbeat_s=s.heartbeat_s,
        )
        self.uplink.commits = self.commits
        port = SerialPortSettings(
            name=f"{self.table_id}-line", url="/dev/null", table_id=self.table_id
        )
        self.line = AgentLine(port, self.outbox, faults, self.table_open, self.uplink.stored)
        plan = TablePlan(self.table_id, bonus_amounts=(500, 1000))  # the $1 progressive wager
        self.simulated = SimulatedTable(plan, self, self.rng, "c", hit_every=s.hit_every)
        self.playing.set()

    def acknowledged(self) -> bool:
        """Whether the controller has acknowledged everything the outbox stored."""
        return self.outbox.acked == self.outbox.stored_high

    def table_open(self) -> bool:
        """The agent's gate: whether progressive wagers are taken now."""
        return self.gate.is_open(asyncio.get_running_loop().time())

    def heard_recently(self) -> bool:
        """Open by the floor's own clock: an acknowledgement accepted within ``closed_after_s``."""
        heard = self.uplink.heard_at
        return heard is not None and time.monotonic() - heard < self.settings.closed_after_s

    async def until_open(self) -> None:
        """The dealer waits for the sign to say OPEN again (it opens at an acknowledgement)."""
        heard = self.uplink.heard()
        while not self.table_open():
            heard.clear()
            await heard.wait()

    async def send(self, event: DeviceInput) -> None:
        """One device message through the agent's answer to its frame (the DeviceLink)."""
        payload = serial_payload(event)
        while True:
            chips = self.outbox.progressive_chips
            opened = self.heard_recently()
            answer = self.line.answer(payload)
            if answer is not None and answer.startswith("ACK,"):
                wager = isinstance(event, BetsLocked) and bool(chips)
                chip = isinstance(event, BetSensed) and event.spot == Spot.PROGRESSIVE.value
                self.record.write(
                    kind="stored", table=self.table_id, id=event.event_id, wager=wager or chip,
                    open=opened, t=time.time(),
                )  # fmt: skip
                return
            if answer is not None and answer.endswith(",table-closed"):
                if isinstance(event, BetSensed):  # a progressive chip refused: the player takes it
                    self.record.write(kind="refused", table=self.table_id, id=event.event_id)
                    return
                await self.until_open()  # a lock with chips up waits for the table to reopen
                continue
            self.record.write(kind="error", table=self.table_id, id=event.event_id, answer=answer)
            return

    async def heartbeat(self, table_id: str, device: str, last: int | None = None) -> None:
        """The agent's own heartbeat speaks for the devices."""

    async def play(self) -> None:
        """Rounds at the floor's pace, each started only while the table is open and playing."""
        pause = self.settings.round_pause_s
        await asyncio.sleep(self.rng.uniform(0, pause))  # the tables do not start in step
        while True:
            if not self.playing.is_set():
                self.idle.set()
                await self.playing.wait()
                self.idle.clear()
            await self.until_open()
            await self.simulated.play_round()
            await asyncio.sleep(pause * self.rng.uniform(0.5, 1.5))  # the dealer's pace


@dataclass
class Follower:
    """A sign's feed: every meter it applies is recorded, and checked never to go back."""

    name: str
    follower: MeterFollower
    record: Record
    last: dict[str, tuple[int, int]] = field(default_factory=dict)
    regressions: int = 0

    async def watch(self) -> None:
        """Record each meter applied, and any that goes back."""
        async for update in self.follower.updates():
            if not isinstance(update, MeterUpdate):
                continue
            key = (update.epoch, update.seq)
            before = self.last.get(update.pool_id)
            if before is not None and key < before:
                self.regressions += 1
                self.record.write(kind="regression", follower=self.name, pool=update.pool_id,
                                  before=before, after=key)  # fmt: skip
            self.last[update.pool_id] = key
            self.record.write(
                kind="applied", follower=self.name, pool=update.pool_id, epoch=update.epoch,
                seq=update.seq, meter=update.meter_cents,
            )  # fmt: skip


def say(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def drain(tables: list[Table], wait_s: float) -> dict[str, Any]:
    """No new rounds; every round under way ends and every outbox is acknowledged to its end."""
    for table in tables:
        table.playing.clear()

    async def until_drained() -> None:
        # Once idle and acknowledged to its end, a table stays so: nothing new is stored.
        for table in tables:
            await table.idle.wait()
            await table.uplink.changes.until(table.acknowledged)

    try:
        async with asyncio.timeout(wait_s):
            await until_drained()
    except TimeoutError:
        late = {
            t.table_id: (t.outbox.acked, t.outbox.stored_high, t.idle.is_set())
            for t in tables
            if t.outbox.acked != t.outbox.stored_high or not t.idle.is_set()
        }
        return {"drained": False, "late": late}
    return {"drained": True}


async def meters_shown(
    followers: list[Follower], wanted: dict[str, int], wait_s: float
) -> dict[str, Any]:
    """Until every follower shows ``wanted`` (pool: meter cents); what each shows."""

    def shown() -> dict[str, dict[str, int | None]]:
        return {
            f.name: {
                pool: (m.meter_cents if (m := f.follower.meters.get(pool)) else None)
                for pool in wanted
            }
            for f in followers
        }

    deadline = asyncio.get_running_loop().time() + wait_s
    while any(each != wanted for each in shown().values()):
        if asyncio.get_running_loop().time() > deadline:
            return {"shown": False, "meters": shown()}
        await asyncio.sleep(0.05)  # the followers tell nobody when they apply: look again soon
    return {"shown": True, "meters": shown(), "regressions": sum(f.regressions for f in followers)}


async def main(settings: FloorSettings) -> None:
    folder = Path(settings.folder)
    record = Record(folder / "floor.jsonl")
    commits = Commits(record)
    rng = random.Random(settings.seed)  # noqa: S311 - simulated players
    tables = [
        Table(tid, settings, record, commits, random.Random(rng.random()))  # noqa: S311
        for tid in settings.tables
    ]
    followers = [
        Follower(
            f"sign-{n}",
            MeterFollower(
                BrokerSettings(
                    host=settings.mqtt_host,
                    port=settings.mqtt_port,
                    site=settings.site,
                    keepalive_s=5,
                    backoff_initial_s=0.05,
                    backoff_cap_s=1.0,
                ),
                client_id=f"sign-{n}",
            ),
            record,
        )
        for n in range(1, settings.followers + 1)
    ]
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    async with asyncio.TaskGroup() as group:
        running = [group.create_task(t.uplink.run()) for t in tables]
        running += [group.create_task(t.play()) for t in tables]
        running += [group.create_task(f.follower.run()) for f in followers]
        running += [group.create_task(f.watch()) for f in followers]
        say(ready=True)
        while line := (await commands.readline()).decode().strip():
            word, _, rest = line.partition(" ")
            if word == "drain":
                say(**await drain(tables, settings.wait_s))
            elif word == "meters":
                say(**await meters_shown(followers, json.loads(rest), settings.wait_s))
            elif word == "resume":
                for table in tables:
                    table.playing.set()
                say(resumed=True)
            else:
                break
        for task in running:
            task.cancel()
    for table in tables:
        table.outbox.close()
    record.close()
    say(stopped=True)


if __name__ == "__main__":
    # floor.log: the agents' connections and resends, timed, for a failover to be read from.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(main(msgspec.json.decode(Path(sys.argv[1]).read_bytes(), type=FloorSettings)))
