"""A table agent's configuration (``jackpotd agent --config agent.toml``): TOML, checked, typed.

The file has three parts (deploy/agent.toml documents every key)::

    [agent]      table_id, outbox, closed_after_s, heartbeat_s, resend_initial_s,
                 resend_cap_s, site, state_file, key_file
    [broker]     the MQTT driver's section, as in the controller's file (docs/mqtt.md)
    [[serial]]   the serial driver's lines (docs/architecture.md), each the agent's table's

The driver sections are read by the drivers' specs (:mod:`controller.plugins`), exactly as in
the controller's file, so that the same keys mean the same things. Every error is one line,
``file: key: reason``. Relative paths are relative to the file's folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from controller.agent.settings import AgentConfig
from controller.config.driver_sections import read_driver
from controller.config.load import read_config_file, toml_document
from controller.config.schema import ConfigError
from controller.config.values import Checker, key_of
from controller.plugins import by_section, link_of
from controller.security.agent_key import AgentKeyError, load_agent_key

if TYPE_CHECKING:
    from pathlib import Path

    from controller.agent_signature import AgentSigner

SERIAL: Final = "serial"


class AgentSection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[agent]`` as written."""

    table_id: str
    outbox: str
    site: str = "casino"
    closed_after_s: float = 10.0
    heartbeat_s: float = 2.0
    resend_initial_s: float = 0.5
    resend_cap_s: float = 10.0
    state_file: str | None = None
    key_file: str | None = None


class _AgentFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    agent: AgentSection


def load_agent_config(path: Path) -> AgentConfig:
    """Read and check an agent's configuration file."""
    return parse_agent_config(read_config_file(path), str(path), path.absolute().parent)


def parse_agent_config(data: bytes, source: str, base_dir: Path) -> AgentConfig:
    """Check one agent configuration document; ``source`` names it in errors."""
    document = toml_document(data, source)
    link = link_of("agent")  # the driver the file reaches the controller by
    broker, serial = document.pop(link.section, None), document.pop(SERIAL, None)
    try:
        section = msgspec.convert(document, _AgentFile).agent
    except msgspec.ValidationError as error:
        raise ConfigError(source, *key_of(error)) from error
    checks = Checker(source, base_dir)
    table_id = checks.identifier("agent.table_id", section.table_id)
    checks = checks.naming(section.site, table_id)
    _timing(checks, section)
    if not isinstance(broker, dict):
        raise checks.fail(
            link.section, f"write a [{link.section}] table: the agent reaches the controller by it"
        )
    (entry,) = read_driver(checks, link, broker)
    settings = entry.settings
    if "client_id" not in broker:
        settings = msgspec.structs.replace(settings, client_id=f"table-{table_id}")
    if not isinstance(serial, list) or not serial:
        raise checks.fail(SERIAL, "write one [[serial]] table for each line of the table's devices")
    for index, line in enumerate(serial):
        if isinstance(line, dict):
            written = line.setdefault("table_id", table_id)
            if written != table_id:
                reason = f"is {written!r}: an agent serves its own table, {table_id!r}"
                raise checks.fail(f"{SERIAL}[{index}].table_id", reason)
    lines = tuple(entry.settings for entry in read_driver(checks, by_section()[SERIAL], serial))
    state_file = None if section.state_file is None else checks.path(section.state_file)
    signer = None if section.key_file is None else _signer(checks, section, table_id)
    return AgentConfig(
        source=source,
        table_id=table_id,
        outbox=checks.path(section.outbox),
        closed_after_s=section.closed_after_s,
        heartbeat_s=section.heartbeat_s,
        resend_initial_s=section.resend_initial_s,
        resend_cap_s=section.resend_cap_s,
        state_file=state_file,
        broker=settings,
        serial=lines,
        signer=signer,
    )


def _signer(checks: Checker, section: AgentSection, table_id: str) -> AgentSigner:
    """The agent's key (``[agent] key_file``, 0600), made for this table (docs/ha.md)."""
    try:
        key = load_agent_key(checks.path(str(section.key_file)))
    except AgentKeyError as error:
        raise checks.fail("agent.key_file", str(error)) from error
    if key.table_id != table_id:
        reason = f"is the key of table {key.table_id!r}'s agent, this agent serves {table_id!r}"
        raise checks.fail("agent.key_file", reason)
    return key.signer()


def _timing(checks: Checker, section: AgentSection) -> None:
    """The agent's times: positive, and a heartbeat answered twice before the table closes."""
    for key in ("closed_after_s", "heartbeat_s", "resend_initial_s", "resend_cap_s"):
        checks.positive(f"agent.{key}", getattr(section, key))
    if section.closed_after_s < 2 * section.heartbeat_s:
        reason = f"is below twice agent.heartbeat_s ({section.heartbeat_s}): one lost answer closes"
        raise checks.fail("agent.closed_after_s", reason)
    if section.resend_cap_s < section.resend_initial_s:
        raise checks.fail("agent.resend_cap_s", "is below agent.resend_initial_s")
    if not section.outbox.strip():
        raise checks.fail("agent.outbox", "the outbox file's path is required")
