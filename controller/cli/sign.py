"""``jackpotd sign``: a sign station, LED meter signs fed over MQTT (docs/signs.md).

The command reads the station's configuration (:mod:`controller.config.sign`) and runs the
sign station's driver program, found by name in the registry as every driver is
(``controller.plugins.program``: the core imports no driver), with
the controller public keys its meters must be signed with (``[sign] controller_keys``). SIGTERM
and SIGINT stop it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from controller import plugins
from controller.cli.common import command
from controller.cli.stopping import LOG_LEVELS, start_logging, until_stopped
from controller.config.sign import load_sign_config

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable, Sequence


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sign``."""
    sign = command(
        commands,
        "sign",
        help="run a sign station: LED meter signs following the meters over MQTT",
        examples="  jackpotd sign --config /etc/jackpotd/sign.toml   # as systemd runs it",
    )
    sign.add_argument("--config", required=True, type=Path, help="the station's TOML file")
    sign.add_argument(
        "--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, help="what to log"
    )
    sign.set_defaults(run=run_sign, logs=True)


def run_sign(args: argparse.Namespace) -> int:
    """Run the station until SIGTERM or SIGINT."""
    config = load_sign_config(args.config)
    start_logging(args.log_level)
    runner: Callable[
        [object, Sequence[object], Sequence[str], Sequence[str], Path | None], Awaitable[None]
    ] = plugins.program("sign").run
    status = f"sign station {config.name}: {len(config.signs)} sign(s), pools {config.pools}"
    station = runner(
        config.broker, config.signs, config.pools, config.controller_keys, config.hits_seen
    )
    asyncio.run(until_stopped(station, status))
    return 0
