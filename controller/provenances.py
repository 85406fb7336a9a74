"""Where a journaled event came from: the provenance each writer names (docs/journal.md).

Every append says where its events came from: one of the daemon's intakes (:data:`INTAKES`),
an operator's command (:func:`cli`), ``jackpotd apply`` (:data:`APPLY`) or ``journal copy``
(:data:`COPY`). The words are the vocabulary the journal writes beside each row and the
ledger's screen reads (:mod:`controller.ledger.screen`: a table's word comes only from the
intake on a signed journal), so they live below both, with no import of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

INTAKES: Final = ("mqtt", "serial", "agent", "simulator", "daemon")
"""The first word of a provenance that names the daemon's own intake (docs/journal.md,
"Provenance"): a broker's source, a serial line, a table agent, the simulator, or the daemon
itself (its liveness monitor, its start-up configuration, its checkpoints and faults)."""
APPLY: Final = "apply"
"""The provenance of events fed in by ``jackpotd apply``."""
DAEMON: Final = "daemon"
"""The provenance of what the service journals itself, unless its intake names the source."""
COPY: Final = "copy"
"""The provenance ``journal copy`` gives a row whose source recorded none (before schema 14)."""

Provenances = str | Sequence[str | None] | None
"""Where appended events came from: one provenance for all, one per event, or None (unsaid)."""


def cli(command: str) -> str:
    """The provenance of an operator's action made at the command line: ``cli <command>``."""
    return f"cli {command}"


def from_intake(provenance: str | None) -> bool:
    """Whether a provenance may carry device input and table status on a signed journal.

    The daemon's own intake names itself (:data:`INTAKES`). The command line always says, so
    that ``cli ...`` and ``apply`` are never taken for a table (NY 9 NYCRR 5321.18(c): a table's
    status is the controller's to decide, from what it hears of the table); and a writer that
    does not say (None) is not taken for the intake either.
    """
    return provenance is not None and provenance.partition(" ")[0] in INTAKES


def copied(provenance: str | None) -> bool:
    """Whether ``journal copy`` appends the row: a verified journal's row, replayed as it was.

    A copy carries each row's provenance; a row its source recorded none for (journaled before
    provenance was) is named :data:`COPY`, and is taken as the source took it.
    """
    return provenance == COPY
