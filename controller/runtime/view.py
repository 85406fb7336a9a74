"""The parts of a running controller, as the service wires them, for whoever needs several."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.ledger_journal import LedgerJournal
    from controller.plugins import SignFace
    from controller.ports import Source
    from controller.runtime.broadcast import Broadcast
    from controller.runtime.liveness import Liveness
    from controller.runtime.metrics import ControllerMetrics
    from controller.runtime.sequencer import Sequencer


@dataclass(slots=True)
class Runtime:
    """One controller's journal, sequencer, fan-out, liveness monitor and metrics."""

    controller_id: str
    journal: LedgerJournal
    broadcast: Broadcast
    sequencer: Sequencer
    liveness: Liveness | None = None
    metrics: ControllerMetrics | None = None
    sources: list[Source] = field(default_factory=list)
    """The sources the drivers built (the demo reads the simulator's rounds from it)."""
    faces: list[SignFace] = field(default_factory=list)
    """Emulated LED signs (the demo's), shown on the display page."""
