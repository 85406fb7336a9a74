"""A table agent's configuration, as checked (``controller/config/agent.py`` reads the file).

The ``[broker]`` and ``[[serial]]`` sections are the drivers' own settings (the MQTT and serial
drivers' types, checked by their specs); the core holds them without knowing their type, as it
does a controller's drivers (docs/architecture.md, "Drivers").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from controller.agent_signature import AgentSigner


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """Everything ``jackpotd agent`` runs on (deploy/agent.toml documents each key)."""

    source: str
    """The file it was read from."""
    table_id: str
    outbox: Path
    closed_after_s: float
    heartbeat_s: float
    resend_initial_s: float
    resend_cap_s: float
    state_file: Path | None
    broker: object
    """The ``[broker]`` section, as the MQTT driver's settings."""
    serial: tuple[object, ...]
    """The ``[[serial]]`` sections, as the serial driver's settings, each bound to the table."""
    signer: AgentSigner | None = None
    """The agent's key (``[agent] key_file``): it signs each device event it forwards
    (docs/ha.md, "Signed forwarding"); None: it forwards them unsigned, as before."""
