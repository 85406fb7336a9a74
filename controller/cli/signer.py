"""``jackpotd signer``: hold the controller key for the service, and sign its heads and checkpoints.

It keeps the mystery levels' sealed triggers too (controller/mystery/keeper.py), in
``--sealed`` (by default ``mystery.json`` beside ``--state``, mode 0600): the service asks it
whether each contribution reaches a trigger, and never holds one before its hit. With
``--sealing-key`` (the cluster's keepers' shared secret, the same file on every node) it seals
each draw for the node that takes over, and takes another node's draw from its envelope
(controller/mystery/envelope.py; docs/ha.md, "Mystery levels across a failover").

Run as its own user (systemd/jackpotd-signer.service), with the key handed over by systemd's
``LoadCredential=`` and a state file only it writes; the service connects to ``--socket``
(``[controller] signer_socket``). What it signs and what it refuses:
controller/service/signer_server.py; docs/operations.md, "The signer".
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli.common import command
from controller.cli.stopping import LOG_LEVELS, start_logging
from controller.runtime.systemd import Notifier
from controller.security.controller_key import load_key, resolve
from controller.security.sealing_key import load_sealing_key
from controller.service.signer_server import Desk, SignerState, serve_signer

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``signer``."""
    signer = command(
        commands,
        "signer",
        help="hold the controller key and sign the service's heads and checkpoints",
        examples=(
            "  jackpotd signer --key '${CREDENTIALS_DIRECTORY}/controller-key' \\\n"
            "      --socket /run/jackpotd-signer/socket \\\n"
            "      --state /var/lib/jackpotd-signer/marks.json --controller floor-1"
        ),
    )
    signer.add_argument(
        "--key", required=True, help="the controller key (${CREDENTIALS_DIRECTORY}/... expanded)"
    )
    signer.add_argument("--socket", required=True, type=Path, help="the Unix socket to listen on")
    signer.add_argument(
        "--state", required=True, type=Path, help="the signer's marks (only the signer writes it)"
    )
    signer.add_argument(
        "--sealed",
        type=Path,
        default=None,
        help="the mystery levels' sealed draws (only the signer reads it; default: "
        "mystery.json beside --state)",
    )
    signer.add_argument(
        "--sealing-key",
        default=None,
        help="the mystery levels' sealing key the cluster's signers share "
        "(jackpotd key generate --sealing; ${CREDENTIALS_DIRECTORY}/... expanded)",
    )
    signer.add_argument(
        "--controller",
        required=True,
        action="append",
        help="a controller id to sign for ([controller] id; repeat for more)",
    )
    signer.add_argument(
        "--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, help="what to log"
    )
    signer.set_defaults(run=run_signer, logs=True)


def run_signer(args: argparse.Namespace) -> int:
    """Sign until SIGTERM or SIGINT."""
    start_logging(args.log_level)
    key = load_key(resolve(args.key))  # a key open to others, or unreadable: one line
    sealing = load_sealing_key(resolve(args.sealing_key)) if args.sealing_key else None
    desk = Desk(key, SignerState(args.state), args.controller, args.sealed, sealing)
    asyncio.run(_serve(desk, args.socket))
    return 0


async def _serve(desk: Desk, socket_path: Path) -> None:
    stop = asyncio.Event()
    ready = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(number, stop.set)
    notifier = Notifier.from_environment()
    serving = asyncio.create_task(serve_signer(desk, socket_path, stop, ready))
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait([serving, waiting], return_when=asyncio.FIRST_COMPLETED)
    if ready.is_set():
        status = f"signing with key {desk.key.key_id} on {socket_path}"
        print(status, flush=True)
        notifier.ready(status)
    waiting.cancel()
    await serving
    notifier.stopping()
