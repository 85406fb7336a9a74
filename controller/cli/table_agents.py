"""``jackpotd table-agent``: table agents' keys, and enrolling, revoking and listing them.

``table-agent key --table T1 --out agent.key`` makes the agent's Ed25519 key (0600, on the
agent's own hardware: ``[agent] key_file`` names it) and prints its public half and id.
``table-agent enroll --table T1 --public-key KEY --key MANAGER_KEY`` enrolls that public key,
signed by a manager (two once two are enrolled), or replaces the table's key (a rotation);
``table-agent revoke --table T1 --reason ... --key MANAGER_KEY`` withdraws it. The ledger
checks each (controller/ledger/table_agents.py) and, from then on, every device event of the
table against it (docs/ha.md, "Signed forwarding").
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from controller.agent_events import TableAgentEnrolled, TableAgentRevoked
from controller.cli.common import (
    CommandError,
    add_db,
    command,
    open_reader,
)
from controller.cli.signing import add_signers, signers
from controller.cli.submit import conclude, open_desk
from controller.ledger.table_agents import agents_of
from controller.security.agent_key import AgentKey, AgentKeyError, write_agent_key
from controller.security.controller_key import ControllerKeyError, key_id, public_key

if TYPE_CHECKING:
    import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``table-agent key|enroll|revoke|list``."""
    parser = command(
        commands,
        "table-agent",
        help="table agents' signing keys: make, enroll, revoke, list",
        examples="  jackpotd table-agent list\n  jackpotd table-agent key --table T1 --out t1.key",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    key = command(
        actions,
        "key",
        help="make a table agent's signing key file (on the agent)",
        examples="  jackpotd table-agent key --table T1 --out /etc/jackpotd/agent.key",
    )
    key.add_argument("--table", required=True, help="the table the agent serves")
    key.add_argument("--out", type=Path, required=True, help="the key file to write (0600)")
    key.set_defaults(run=run_key)

    enroll = command(
        actions,
        "enroll",
        help="enroll (or replace) a table agent's public key, signed by a manager",
        examples="  jackpotd table-agent enroll --table T1 --public-key 'MCow...=' --key mgr.key",
    )
    add_db(enroll)
    enroll.add_argument("--table", required=True, help="the table the agent serves")
    enroll.add_argument(
        "--public-key", required=True, help="the agent's public key, as `table-agent key` printed"
    )
    enroll.add_argument("--reason", default="table agent enrolled", help="why, for the journal")
    add_signers(enroll)
    enroll.set_defaults(run=run_enroll)

    revoke = command(
        actions,
        "revoke",
        help="withdraw a table agent's key (nothing of the table is taken until a new one)",
        examples="  jackpotd table-agent revoke --table T1 --reason 'box replaced' --key mgr.key",
    )
    add_db(revoke)
    revoke.add_argument("--table", required=True, help="the table whose agent key goes")
    revoke.add_argument("--reason", required=True, help="why, for the journal")
    add_signers(revoke)
    revoke.set_defaults(run=run_revoke)

    listing = command(
        actions, "list", help="each table's agent key", examples="  jackpotd table-agent list"
    )
    add_db(listing)
    listing.set_defaults(run=run_list)


def run_key(args: argparse.Namespace) -> int:
    """Make a key file; print the public key a manager enrolls."""
    key = AgentKey.generate(args.table)
    try:
        write_agent_key(args.out, key)
    except AgentKeyError as error:
        raise CommandError(str(error)) from error
    print(f"{args.out}: key of table {args.table}'s agent, id {key.key_id}")
    print(f"public key {key.public_key}")
    return 0


def run_enroll(args: argparse.Namespace) -> int:
    """Enroll the agent's public key, signed by a manager."""
    try:
        text = public_key(args.public_key)
    except ControllerKeyError as error:
        raise CommandError(f"--public-key: {error}") from error
    with open_desk(args) as desk:
        keys = signers(args, desk, "enroll")
        event = TableAgentEnrolled(
            f"table-agent-{uuid.uuid4()}", desk.now(), args.table, text, key_id(text),
            keys[0][0], args.reason,
        )  # fmt: skip
        return conclude(args, desk, event, keys)


def run_revoke(args: argparse.Namespace) -> int:
    """Withdraw the table agent's key, signed by a manager."""
    with open_desk(args) as desk:
        agent = agents_of(desk.state).get(args.table)
        if agent is None or not agent.key_id:
            raise CommandError(f"table {args.table} has no enrolled agent key")
        keys = signers(args, desk, "enroll")
        event = TableAgentRevoked(
            f"table-agent-{uuid.uuid4()}", desk.now(), args.table, agent.key_id, keys[0][0],
            args.reason,
        )  # fmt: skip
        return conclude(args, desk, event, keys)


def run_list(args: argparse.Namespace) -> int:
    """Print each table's agent key id (``revoked``: none, nothing of it is taken)."""
    with open_reader(args) as journal:
        agents = agents_of(journal.state)
    if not agents:
        print("no table agent enrolled")
        return 0
    for table_id, agent in sorted(agents.items()):
        print(f"{table_id}  {agent.key_id or 'revoked: no key, nothing of the table is taken'}")
    return 0
