"""The Dynasty Bonus profiles: which reading of the Dynasty hands a table's paytable keeps to.

58 Pa. Code § 645a.6(g) and N.J.A.C. 13:69F-11(i) list different Dynasty Bonus hands, and
§ 645a.6(g)(3) reads two ways (docs/rules.md § 5.4);
:data:`controller.rules.paytable.DYNASTY_PROFILES` names the readings. A table offering the EZ Pai
Gow Dynasty Bonus journals the profile it follows beside the paytable
(``TableConfigured.dynasty_profile``), and a paytable that pays a Dynasty hand of another reading
is refused, so that every hand is paid on the lines of one regulation's text. Both texts also pay
the § 645a.6(b) hands; those any profile may list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.rules.paytable import DYNASTY_PROFILES

if TYPE_CHECKING:
    from controller.rules.paytable import Paytable

DYNASTY_LINES: Final = frozenset(line for lines in DYNASTY_PROFILES.values() for line in lines)
"""Every seven-card Dynasty hand of any profile (the § 645a.6(b) hands are not among them)."""


def off_profile(paytable: Paytable, profile: str) -> str | None:
    """Why ``paytable`` cannot be paid under Dynasty ``profile``, or None if it can."""
    lines = DYNASTY_PROFILES.get(profile)
    if lines is None:
        return f"unknown Dynasty profile {profile!r}; one of {', '.join(DYNASTY_PROFILES)}"
    for row in paytable.lines:
        if row.line in DYNASTY_LINES and row.line not in lines:
            return (
                f"{paytable.name} pays {row.line}, which the {profile!r} Dynasty profile "
                "does not define"
            )
    return None
