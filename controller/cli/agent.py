"""``jackpotd agent``: the service on a table's hardware (docs/ha.md, "Table agents").

The agent owns the table's serial devices, keeps their messages in a durable outbox and
forwards them to the controller until acknowledged; it closes the table when the controller
goes quiet. The command reads the configuration (:mod:`controller.config.agent`), opens the
outbox (:mod:`controller.journal.agent_outbox`: its SQL lives with the journal's) and runs the
agent's driver, found by name as every driver is (the core imports no driver). SIGTERM and
SIGINT stop it; what is stored stays in the outbox for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.cli.common import command
from controller.config.agent import load_agent_config
from controller.journal.agent_outbox import AgentOutboxStore
from controller.runtime.logsafe import log_handler
from controller.runtime.systemd import Notifier

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from controller.agent.settings import AgentConfig
    from controller.agent.store import AgentOutbox

AGENT_DRIVER: Final = "drivers.agent.service:run_agent"
"""Where the agent's driver lives, as a string (controller.plugins finds drivers the same way)."""
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``agent``."""
    agent = command(
        commands,
        "agent",
        help="run a table agent: the table's serial devices, an outbox, the link to the controller",
        examples="  jackpotd agent --config /etc/jackpotd/agent.toml   # as systemd runs it",
    )
    agent.add_argument("--config", required=True, type=Path, help="the agent's TOML configuration")
    agent.add_argument(
        "--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, help="what to log"
    )
    agent.set_defaults(run=run_agent, logs=True)


def run_agent(args: argparse.Namespace) -> int:
    """Run the agent until SIGTERM or SIGINT."""
    config = load_agent_config(args.config)
    logging.basicConfig(level=args.log_level, handlers=[log_handler(sys.stderr)], force=True)
    module, _, attribute = AGENT_DRIVER.partition(":")
    runner: Callable[[AgentConfig, AgentOutbox], Awaitable[None]] = getattr(
        import_module(module), attribute
    )
    outbox = AgentOutboxStore(config.outbox, config.table_id)
    status = f"table {config.table_id}, boot {outbox.boot}, outbox {config.outbox}"
    try:
        asyncio.run(_until_stopped(runner(config, outbox), status))
    finally:
        outbox.close()
    return 0


async def _until_stopped(agent: Awaitable[None], status: str) -> None:
    """Run the agent, tell systemd (``Type=notify``, its watchdog), stop on SIGTERM or SIGINT."""
    notifier = Notifier.from_environment()
    task = asyncio.ensure_future(agent)
    keepalive = asyncio.ensure_future(notifier.watchdog())

    def stop() -> None:
        notifier.stopping()
        task.cancel()

    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(number, stop)
    notifier.ready(status)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        keepalive.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keepalive
