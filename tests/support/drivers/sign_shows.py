"""What a sign's state machine shows for a run of meter updates, on a fake clock.

The tests of what an Alpha sign shows (tests/drivers/signs/) drive
:class:`drivers.signs.behaviour.SignBehaviour` with updates a second apart and hold the texts it
sends to what docs/signs.md, "What a sign shows", says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drivers.signs.behaviour import SignBehaviour

if TYPE_CHECKING:
    from controller.outputs import MeterUpdate
    from drivers.signs.rules import SignRules


def shown(rules: SignRules, *updates: MeterUpdate) -> list[str]:
    """Every text the sign shows for ``updates``, each a second after the last."""
    sign = SignBehaviour(rules)
    texts: list[str] = []
    for index, update in enumerate(updates):
        texts += [show.text for show in sign.update(update, float(index)).shows]
    return texts
