"""Jurisdiction profiles: the rules of a pool's life that differ from one regulator to another.

The configuration names its jurisdiction (``[controller] jurisdiction``), and the name reaches
the ledger only inside a manager's signed configuration approval, like every setting that
moves money (controller/config/approval.py). From that approval on, the ledger holds every
transfer and retirement to the profile's rules (controller/ledger/pool_life.py; docs/rules.md,
"A pool's life"):

* **Causes.** A transfer, or a retirement, names its documented cause (``--cause``); a profile
  may allow only some. Michigan allows a transfer only on a documented malfunction or when
  gaming ceases for good, and an elimination only when gaming ceases (Mich. Admin. Code
  R 432.1838(4)); Indiana lets a jackpot move on a malfunction or a replacement (68 IAC
  2-6-33).
* **A minimum life.** A pool is not retired before it has lived so many days since it opened
  (or since the profile was approved, for a pool open before it: the life the ledger can
  prove). The strict profile asks the three months of the arrêté du 14 mai 2007, art. 68-20-1.

``strict`` holds the strictest of them at once, for a site whose regulator's rules are not
encoded here. Pennsylvania, New Jersey and New York have no rule of a pool's life encoded
beyond the common ones (a documented, signed decision; every cent disposed of). A journal
whose configuration names no jurisdiction has no profile, and the common rules alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MALFUNCTION: Final = "malfunction"
REPLACEMENT: Final = "replacement"
GAMING_CEASED: Final = "gaming-ceased"
OTHER: Final = "other"
CAUSES: Final = (MALFUNCTION, REPLACEMENT, GAMING_CEASED, OTHER)
"""The documented causes a transfer or a retirement may name."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A jurisdiction's rules of a pool's life; None: any documented cause."""

    name: str
    transfer_causes: frozenset[str] | None = None
    retire_causes: frozenset[str] | None = None
    min_life_days: int = 0


PROFILES: Final = {
    "PA": Profile("PA"),
    "NJ": Profile("NJ"),
    "NY": Profile("NY"),
    "MI": Profile(
        "MI",
        transfer_causes=frozenset({MALFUNCTION, GAMING_CEASED}),
        retire_causes=frozenset({GAMING_CEASED}),
    ),
    "IN": Profile("IN", transfer_causes=frozenset({MALFUNCTION, REPLACEMENT})),
    "strict": Profile(
        "strict",
        transfer_causes=frozenset({MALFUNCTION}),
        retire_causes=frozenset({GAMING_CEASED}),
        min_life_days=91,
    ),
}
"""Every profile a configuration may name."""


def profile(name: str) -> Profile | None:
    """The profile ``name`` names, or None if it names none."""
    return PROFILES.get(name)
