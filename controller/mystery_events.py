"""A mystery level's draws and hits as the journal records them (docs/rules.md, "Mystery levels").

:class:`MysteryDrawn` is the draw's public statement (controller/mystery/core.py ``Drawn``): the
level's range and the commitment to its trigger, signed by the controller key. The trigger
and its nonce stay with the keeper until a contribution reaches the trigger; then
:class:`MysteryRevealed` records them (``Reveal``), and the ledger pays the wager whose
contribution crossed it (controller/ledger/mystery_level.py). Under high availability the draw
carries its trigger sealed for the cluster's keepers (``sealed``, controller/mystery/envelope.py),
so that the node that takes over goes on with the same trigger. Both are the controller's own
rows, never an operator's or a device's. They join the journal's tagged union in
:mod:`controller.events`.
"""

from __future__ import annotations

import msgspec

from controller.event_base import Event
from controller.mystery.core import Drawn, Reveal
from controller.mystery.envelope import Envelope


class MysteryDrawn(Event, frozen=True, tag="mystery-drawn"):
    """A mystery level's next draw: its commitment, signed; the trigger is not in it."""

    drawn: Drawn
    sealed: Envelope | msgspec.UnsetType = msgspec.UNSET
    """The trigger and nonce sealed for the cluster's keepers; unset with no sealing key (the
    row is then what it was before envelopes existed)."""


class MysteryRevealed(Event, frozen=True, tag="mystery-revealed"):
    """A mystery level's trigger reached: the trigger and nonce that open the commitment."""

    reveal: Reveal
