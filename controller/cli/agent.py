"""``jackpotd agent``: the service on a table's hardware (docs/ha.md, "Table agents").

The agent owns the table's serial devices, keeps their messages in a durable outbox and
forwards them to the controller until acknowledged; it closes the table when the controller
goes quiet. The command reads the configuration (:mod:`controller.config.agent`), opens the
outbox (:mod:`controller.journal.sqlite.agent_outbox`: its SQL lives with the journal's) and
runs the agent's driver program, found by name in the registry as every driver is
(``controller.plugins.program``: the core imports no driver). SIGTERM and SIGINT stop it; what
is stored stays in the outbox for the next start.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from controller import plugins
from controller.cli.common import command
from controller.cli.stopping import LOG_LEVELS, start_logging, until_stopped
from controller.config.agent import load_agent_config
from controller.journal.sqlite.agent_outbox import AgentOutboxStore

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from controller.agent.settings import AgentConfig
    from controller.agent.store import AgentOutbox


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
    start_logging(args.log_level)
    runner: Callable[[AgentConfig, AgentOutbox], Awaitable[None]] = plugins.program("agent").run
    outbox = AgentOutboxStore(config.outbox, config.table_id)
    status = f"table {config.table_id}, boot {outbox.boot}, outbox {config.outbox}"
    try:
        asyncio.run(until_stopped(runner(config, outbox), status))
    finally:
        outbox.close()
    return 0
