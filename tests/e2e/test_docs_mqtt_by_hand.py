"""docs/mqtt.md, "Trying it by hand": the commands printed there do what the page says.

The page's ``mosquitto_pub`` lines run as written (only the broker's address and the site
added) against a real mosquitto and the real daemon: table t1 comes online, a progressive bet
and "no more bets" become a locked wager, and the malformed bet is refused and recorded as a
fault. A page a vendor copies from must not drift from the code.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from support.runtime.daemon import SITE, daemon, tables_announced, write_config
from support.runtime.floor import POOL

if TYPE_CHECKING:
    from support.drivers.mosquitto import Broker

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mqtt.md"


def published_commands(broker: Broker) -> list[list[str]]:
    """The page's mosquitto_pub commands, pointed at the test's broker and site."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Trying it by hand", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "docs/mqtt.md lost its shell block"
    joined = block.group(1).replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "mosquitto_pub":
            words = [word.replace("casino/", f"{SITE}/") for word in words]
            commands.append([*words, "-h", broker.host, "-p", str(broker.port)])
    return commands


async def run(command: list[str]) -> None:
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(30):
        out, err = await process.communicate()
    assert process.returncode == 0, (command, out, err)


async def test_the_pages_commands_make_a_wager_and_a_recorded_fault(
    mosquitto: Broker, tmp_path: Path
) -> None:
    commands = published_commands(mosquitto)
    assert len(commands) == 4  # status, bet, lock, the malformed bet
    config = write_config(tmp_path, broker=mosquitto, mqtt=["t1"])
    async with daemon(config) as running:
        await run(commands[0])
        await tables_announced(running, ["t1"])
        for command in commands[1:3]:
            await run(command)
        await running.until_id("t1/dealer/1", "the lock journaled")
        await run(commands[3])
        await running.until(
            lambda: any(r["kind"] == "fault" for r in running.rows()), "the refusal journaled"
        )
        rows = running.rows()
        await running.stop()
    kinds = [row["kind"] for row in rows]
    assert "bet-sensed" in kinds
    assert "bets-locked" in kinds
    pool = running.runtime.journal.state.pools[POOL]
    assert (pool.wagers_count, pool.wagers_cents) == (1, 100)
